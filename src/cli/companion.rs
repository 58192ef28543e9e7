//! `lakeseek sql` and `lakeseek worker`: run the `lakeseek-sql` companion binary (built by
//! the `lakeseek-datafusion` workspace member), so this crate stays free of DataFusion.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments passed through verbatim to the companion.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct CompanionArgs {
    /// Arguments of the command (see `lakeseek <command> --help`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub(crate) args: Vec<OsString>,
}

/// The companion's file name on this platform.
fn companion_name() -> String {
    format!("lakeseek-sql{}", std::env::consts::EXE_SUFFIX)
}

/// The companion next to this executable (or next to its parent directory, as for test
/// binaries in `target/*/deps/`), else on `PATH`.
fn find_companion() -> Option<PathBuf> {
    let name = companion_name();
    let beside = |dir: &Path| Some(dir.join(&name)).filter(|p| p.is_file());
    if let Ok(exe) = std::env::current_exe() {
        let dir = exe.parent()?;
        if let Some(p) = beside(dir).or_else(|| dir.parent().and_then(beside)) {
            return Some(p);
        }
    }
    std::env::split_paths(&std::env::var_os("PATH")?).find_map(|d| beside(&d))
}

/// The session flags given before the command (`lakeseek --cache-dir D --max-requests N
/// sql ...`), passed on to the companion, which takes them too.
fn cache_flags(cache: &crate::cli::CacheArgs) -> Vec<OsString> {
    let mut out = Vec::new();
    if let Some(dir) = &cache.cache_dir {
        out.extend([OsString::from("--cache-dir"), dir.clone().into_os_string()]);
    }
    if let Some(bytes) = cache.cache_bytes {
        out.extend([OsString::from("--cache-bytes"), bytes.to_string().into()]);
    }
    if let Some(n) = cache.max_requests {
        out.extend([OsString::from("--max-requests"), n.to_string().into()]);
    }
    if let Some(bytes) = cache.max_in_flight_bytes {
        out.extend([
            OsString::from("--max-in-flight-bytes"),
            bytes.to_string().into(),
        ]);
    }
    out
}

/// Run `lakeseek-sql <command> <args>`: on Unix the companion replaces this process (same
/// PID, stdio and exit status); elsewhere it runs as a child whose status is returned.
pub(crate) fn run(command: &str, args: &CompanionArgs, cache: &crate::cli::CacheArgs) -> ExitCode {
    let Some(path) = find_companion() else {
        eprintln!(
            "error: `lakeseek {command}` runs the companion binary {}, which is neither next \
             to this executable nor on PATH; build it with `cargo build --release` at the \
             repository root (it is the lakeseek-datafusion workspace member) or install it \
             with `cargo install --path lakeseek-datafusion`",
            companion_name()
        );
        return ExitCode::FAILURE;
    };
    let mut child = std::process::Command::new(&path);
    child.arg(command).args(cache_flags(cache)).args(&args.args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = child.exec();
        eprintln!("error: cannot run {}: {e}", path.display());
        ExitCode::FAILURE
    }
    #[cfg(not(unix))]
    match child.status() {
        Ok(status) => match status.code() {
            Some(0) => ExitCode::SUCCESS,
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            None => ExitCode::FAILURE,
        },
        Err(e) => {
            eprintln!("error: cannot run {}: {e}", path.display());
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_flags_are_passed_on_to_the_companion() {
        let none = crate::cli::CacheArgs::default();
        assert!(cache_flags(&none).is_empty());
        let all = crate::cli::CacheArgs {
            cache_dir: Some("/tmp/c".into()),
            cache_bytes: Some(1 << 20),
            max_requests: Some(8),
            max_in_flight_bytes: Some(1 << 24),
        };
        let flags: Vec<String> = cache_flags(&all)
            .into_iter()
            .map(|f| f.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            flags,
            [
                "--cache-dir",
                "/tmp/c",
                "--cache-bytes",
                "1048576",
                "--max-requests",
                "8",
                "--max-in-flight-bytes",
                "16777216"
            ]
        );
    }
}
