//! `lakeseek demo`: runs the binary on its bundled data (offline, in memory) and checks every
//! answer against the oracle `assets/demo/gen_demo.py` stored from pylance 14.0.2
//! (`assets/demo/answers.json`; ecp: the numpy reference search of the ecp fixture), and that
//! each step that must read something sent requests.

use std::process::Command;

use serde_json::Value;

/// Run `lakeseek demo ARGS`, returning stdout (the process must exit 0).
fn demo(args: &[&str]) -> String {
    let output = Command::new(crate::suite::common::lakeseek_bin())
        .arg("demo")
        .args(args)
        .output()
        .expect("run lakeseek demo");
    assert!(
        output.status.success(),
        "lakeseek demo {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8 output")
}

/// The oracle written by the generator.
fn answers() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo/answers.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("read answers.json"))
        .expect("parse answers.json")
}

fn step<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .find(|s| s["step"] == name)
        .unwrap_or_else(|| panic!("no step {name} in {report}"))
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|x| x.as_u64().expect("unsigned"))
        .collect()
}

/// Equal as JSON, numbers compared at float32 precision (pylance stored float32 values
/// widened to float64; arrow-json writes the shortest float32 text).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x.as_f64().map(|v| v as f32) == y.as_f64().map(|v| v as f32)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn check_report(report: &Value, oracle: &Value) {
    let names: Vec<&str> = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "open",
            "btree",
            "any_element",
            "take_cold",
            "take_warm",
            "ecp_open",
            "ecp_search"
        ]
    );
    for name in ["btree", "any_element"] {
        let s = step(report, name);
        assert_eq!(s["what"], oracle[name]["filter"], "{name} filter");
        let got = u64s(&s["result"]);
        let want = u64s(&oracle[name]["row_addresses"]);
        assert!(!want.is_empty(), "{name}: the oracle has rows");
        assert_eq!(got, want, "{name}: row addresses differ from pylance's");
        // Answered from the index, not a scan: fewer bytes than the whole column's pages.
        let whole = s["whole"]["bytes"].as_u64().unwrap();
        assert!(s["io"]["bytes"].as_u64().unwrap() < whole, "{name}: {s}");
    }
    assert_eq!(u64s(&step(report, "btree")["result"]).len(), 1);
    for name in ["take_cold", "take_warm"] {
        let s = step(report, name);
        let want = &oracle[name];
        assert_eq!(u64s(&s["result"]), u64s(&want["row_addresses"]), "{name}");
        assert!(
            same(&s["values"], &want["detections"]),
            "{name}: detections differ from pylance's _take_rows:\n{}\nvs\n{}",
            s["values"],
            want["detections"]
        );
        let non_empty = s["values"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l.as_array().is_some_and(|l| !l.is_empty()))
            .count();
        assert!(non_empty >= 2, "{name}: the draw holds non-empty lists");
    }
    let search = step(report, "ecp_search");
    assert_eq!(
        u64s(&search["result"]),
        u64s(&oracle["ecp"]["expected"]["pages"][0]["ids"]),
        "ecp ids differ from the reference search"
    );
    assert!(
        search["io"]["bytes"].as_u64().unwrap() < search["whole"]["bytes"].as_u64().unwrap(),
        "the search reads less than the whole index: {search}"
    );
    // Every step reads from the store: nothing is served by a single suffix read any more
    // (the warm take still fetches the value chunks of its non-empty lists).
    for &name in &names {
        let s = step(report, name);
        assert!(
            s["io"]["requests"].as_u64().unwrap() > 0,
            "{name} sent no request: {s}"
        );
        assert!(s["io"]["bytes"].as_u64().unwrap() > 0, "{name}: {s}");
        assert!(s["io"]["round_trips"].as_u64().unwrap() > 0, "{name}: {s}");
    }
    // Round trips as the depth of each step's request graph (measured on a paused clock, so
    // deterministic): a cold take is tail -> page init -> chunks, a warm one only the chunks.
    let depth = |name| step(report, name)["depth"].as_u64().unwrap();
    assert_eq!(depth("take_cold"), 3, "{report}");
    assert_eq!(depth("take_warm"), 1, "{report}");
    for &name in &names {
        assert!(
            depth(name) >= 1
                && depth(name) <= step(report, name)["io"]["requests"].as_u64().unwrap()
        );
    }
    // A take of data files no earlier step opened costs more requests than a warm one.
    let requests = |name| step(report, name)["io"]["requests"].as_u64().unwrap();
    assert!(requests("take_cold") > requests("take_warm"));
    assert_eq!(report["all_match"], true, "{report}");
    let bundled = report["bundled_bytes"].as_u64().unwrap();
    assert!(bundled < 2 << 20, "bundled data is {bundled} bytes");
}

#[test]
fn demo_json_answers_match_pylance() {
    let report: Value = serde_json::from_str(demo(&["--json"]).trim()).expect("one JSON object");
    assert_eq!(report["latency_ms"], 0);
    check_report(&report, &answers());
}

#[test]
fn demo_with_latency_gives_the_same_answers() {
    let report: Value =
        serde_json::from_str(demo(&["--json", "--latency-ms", "3"]).trim()).expect("JSON");
    assert_eq!(report["latency_ms"], 3);
    check_report(&report, &answers());
}

#[test]
fn demo_table_names_every_step_and_the_check() {
    let text = demo(&[]);
    for needle in [
        "a) BTree: key = '",
        "b) any_element (list element index)",
        "c) take 20 rows of detections, cold",
        "take 20 other rows, warm",
        "d) vector search, k = 10",
        "Every answer matches pylance 14.0.2",
        "Why lakeseek",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    assert!(
        text.lines().count() < 25,
        "short enough to read at a glance:\n{text}"
    );
}
