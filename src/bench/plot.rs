//! `--plot out.svg`: the latency distribution of one run, or of several overlaid
//! (`--compare`): the CDF on the left, a histogram (share of operations per latency bin,
//! same bins for every run) on the right.
//!
//! The file name picks the format: `.svg` (text left to the viewer's fonts) or `.png`
//! (rasterized here). Text is measured and, for PNG, drawn with a bundled subset of DejaVu
//! Sans (`assets/fonts/`, made by `make_subset.sh`), so the output does not depend on the
//! fonts of the machine (CI machines and serverless images often have none).

use std::ops::Range;

use plotters::prelude::*;

use crate::bench::report::{cdf_points, histogram_in, BenchReport};
use crate::{Error, Result};

/// Bins of the histogram panel.
pub(crate) const HISTOGRAM_BINS: usize = 30;

/// An image format `--plot` can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlotFormat {
    /// Scalable vector graphics.
    Svg,
    /// A 1200×520 PNG bitmap.
    Png,
}

/// The format named by `path`'s extension (`.svg` or `.png`, any case).
pub(crate) fn check_plot_path(path: &str) -> Result<PlotFormat> {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".svg") {
        Ok(PlotFormat::Svg)
    } else if lower.ends_with(".png") {
        Ok(PlotFormat::Png)
    } else {
        Err(Error::InvalidArgument(format!(
            "--plot {path}: unknown image format (use a .svg or .png file name)"
        )))
    }
}

/// The bundled font (DejaVu Sans, subset; licence in `assets/fonts/DejaVu-LICENSE.txt`).
const FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-subset.ttf");

/// Register the bundled font as plotters' `sans-serif` (once per process).
fn register_font() -> Result<()> {
    static REGISTERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(
            "--plot: the bundled font could not be loaded".into(),
        ))
    }
}

/// Image size in pixels (SVG user units).
const SIZE: (u32, u32) = (1200, 520);

/// Colors of the runs, in order (the current run first).
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

/// The title line: what ran, and whether its latency was injected.
fn title(run: &BenchReport) -> String {
    let s = &run.settings;
    let latency = if s.injected_latency_ms > 0 {
        format!("--latency-ms {}: simulated delay", s.injected_latency_ms)
    } else {
        "no --latency-ms".to_string()
    };
    format!(
        "lakeseek bench {} {} ({}, {}, {} ops, concurrency {}, {latency})",
        s.command, s.url, s.mode, s.target, run.operations_completed, s.concurrency
    )
}

/// Legend entry of a run: its label with p50 / p99.
fn legend(run: &BenchReport) -> String {
    format!(
        "{} — p50 {:.1} ms, p99 {:.1} ms (n={})",
        run.settings.label, run.latency_ms.p50, run.latency_ms.p99, run.operations_completed
    )
}

fn plot_error(path: &str, e: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("cannot draw --plot {path}: {e}"))
}

/// Draw the latency CDF and histogram of `runs` (first = this run) to `path` (`.svg` or
/// `.png`).
pub(crate) fn write_latency_plot(path: &str, runs: &[BenchReport]) -> Result<()> {
    let format = check_plot_path(path)?;
    register_font()?;
    let all: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.latencies_ms())
        .filter(|v| v.is_finite())
        .collect();
    if all.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "--plot {path}: no finished operations to draw"
        )));
    }
    let max = all.iter().copied().fold(0.0f64, f64::max);
    let min = all.iter().copied().fold(f64::INFINITY, f64::min);
    let x_max = if max > 0.0 { max * 1.05 } else { 1.0 };
    // Start the axis at 0 unless every latency sits far from it.
    let x_min = if min > 0.2 * max { min * 0.9 } else { 0.0 };
    let drawn = match format {
        PlotFormat::Svg => draw(
            SVGBackend::new(path, SIZE).into_drawing_area(),
            runs,
            x_min..x_max,
        ),
        PlotFormat::Png => draw(
            BitMapBackend::new(path, SIZE).into_drawing_area(),
            runs,
            x_min..x_max,
        ),
    };
    drawn.map_err(|e| plot_error(path, e))
}

type Area<DB> = DrawingArea<DB, plotters::coord::Shift>;
type DrawResult = std::result::Result<(), Box<dyn std::error::Error + 'static>>;

fn draw<DB: DrawingBackend>(root: Area<DB>, runs: &[BenchReport], x: Range<f64>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let root = root.titled(&title(&runs[0]), ("sans-serif", 20))?;
    let (left, right) = root.split_horizontally(SIZE.0 / 2);
    draw_cdf(&left, runs, x.clone())?;
    draw_histogram(&right, runs, x)?;
    root.present()?;
    Ok(())
}

fn draw_cdf<DB: DrawingBackend>(area: &Area<DB>, runs: &[BenchReport], x: Range<f64>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .caption("latency CDF", ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(x, 0.0..1.0)?;
    chart
        .configure_mesh()
        .x_desc("latency per operation (ms)")
        .y_desc("fraction of operations ≤ x")
        .draw()?;
    for (i, run) in runs.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let points = cdf_points(&run.latencies_ms());
        // A step function: horizontal to each value, then up.
        let mut steps = Vec::with_capacity(points.len() * 2 + 1);
        let mut previous = 0.0;
        for (x, y) in points {
            steps.push((x, previous));
            steps.push((x, y));
            previous = y;
        }
        chart
            .draw_series(LineSeries::new(steps, color.stroke_width(2)))?
            .label(legend(run))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

fn draw_histogram<DB: DrawingBackend>(
    area: &Area<DB>,
    runs: &[BenchReport],
    x: Range<f64>,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let histograms: Vec<Vec<(f64, f64, f64)>> = runs
        .iter()
        .map(|run| {
            let n = run.operations.len().max(1) as f64;
            histogram_in(&run.latencies_ms(), x.start, x.end, HISTOGRAM_BINS)
                .into_iter()
                .map(|(a, b, c)| (a, b, c as f64 / n))
                .collect()
        })
        .collect();
    let y_max = histograms
        .iter()
        .flatten()
        .map(|b| b.2)
        .fold(0.0f64, f64::max)
        .max(0.01)
        * 1.1;
    let mut chart = ChartBuilder::on(area)
        .caption("latency histogram", ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(x, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc("latency per operation (ms)")
        .y_desc("share of operations per bin")
        .draw()?;
    for (i, bins) in histograms.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        if i == 0 {
            chart.draw_series(bins.iter().map(|&(a, b, share)| {
                Rectangle::new([(a, 0.0), (b, share)], color.mix(0.35).filled())
            }))?;
        }
        let mut outline = Vec::with_capacity(bins.len() * 2 + 2);
        for &(a, b, share) in bins {
            outline.push((a, share));
            outline.push((b, share));
        }
        chart.draw_series(LineSeries::new(outline, color.stroke_width(2)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_and_png_paths_are_accepted() {
        assert_eq!(check_plot_path("a/b.SVG").unwrap(), PlotFormat::Svg);
        assert_eq!(check_plot_path("x.png").unwrap(), PlotFormat::Png);
        let jpg = check_plot_path("x.jpg").unwrap_err().to_string();
        assert!(jpg.contains(".svg or .png"), "{jpg}");
    }

    #[test]
    fn the_bundled_font_loads_and_has_the_glyphs_the_plot_uses() {
        register_font().unwrap();
        let font = ab_glyph::FontRef::try_from_slice(FONT).unwrap();
        use ab_glyph::Font;
        for c in "latency CDF ≤ — 0123456789 ms p50 p99 (n=)".chars() {
            assert_ne!(font.glyph_id(c).0, 0, "missing glyph {c:?}");
        }
    }
}
