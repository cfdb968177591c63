//! `chunkwise bench b2z`: one run of the command (both tools, both workloads, values checked
//! against `gen_b2z.py --big`'s manifests), and a wrong expected value failing each tool.

use native_harness::bench_b2z::{self, Sample};
use std::path::{Path, PathBuf};

mod common;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn one_run_measures_both_tools_on_both_workloads() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
        .args(["bench", "b2z", "--runs", "1", "--json"])
        .output()
        .expect("chunkwise runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench b2z failed: {stderr}");
    let samples: Vec<Sample> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let find = |tool: &str, workload: &str, phase: &str| -> &Sample {
        samples
            .iter()
            .find(|s| s.tool == tool && s.workload == workload && s.phase == phase)
            .unwrap_or_else(|| panic!("no {tool} {workload} {phase} in {samples:?}"))
    };
    let py = "python-blosc2 4.14.1";
    for workload in ["tree", "table"] {
        for (tool, phases) in [
            ("chunkwise", &["cold", "warm"][..]),
            (py, &["cold", "cold, DISK", "warm"][..]),
        ] {
            for phase in phases {
                let s = find(tool, workload, phase);
                if *phase != "warm" {
                    assert!(s.requests > 0 && s.bytes > 0, "{s:?}");
                }
                if tool == "chunkwise" {
                    // Its Traffic agrees with the server's log of the phase.
                    assert_eq!(s.requests, s.log_requests, "{s:?}");
                }
            }
        }
    }
    // Both fetch the small table archive whole (2 requests: the tail, then the rest).
    assert_eq!(find("chunkwise", "table", "cold").requests, 2);
    assert_eq!(find(py, "table", "cold").requests, 2);
    assert_eq!(
        find("chunkwise (20 leaves at once)", "tree", "cold").log_requests,
        { find("chunkwise", "tree", "cold").log_requests }
    );
}

/// A copy of the benchmark fixtures (hard links to the archives) with `edit` applied to one
/// manifest.
fn tampered(name: &str, manifest: &str, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let src = bench_b2z::make_fixtures(&repo()).expect("gen_b2z.py --big");
    let dir = common::process_dir(&format!("chunkwise-bench-b2z-{name}-"));
    for f in ["big.b2z", "bench_table.b2z", "big.json", "bench_table.json"] {
        let _ = std::fs::remove_file(dir.join(f));
        if f.ends_with(".b2z") {
            std::fs::hard_link(src.join(f), dir.join(f))
                .or_else(|_| std::fs::copy(src.join(f), dir.join(f)).map(|_| ()))
                .unwrap();
        } else {
            std::fs::copy(src.join(f), dir.join(f)).unwrap();
        }
    }
    let path = dir.join(manifest);
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut m);
    std::fs::write(&path, serde_json::to_string(&m).unwrap()).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_expected_value_fails_chunkwise() {
    let dir = tampered("rust", "big.json", |m| {
        let v = m["leaves"]["/leaves/l07"]["first"].as_f64().unwrap();
        m["leaves"]["/leaves/l07"]["first"] = (v + 1.0).into();
    });
    let exe = Path::new(env!("CARGO_BIN_EXE_chunkwise"));
    let e = bench_b2z::run(exe, &repo(), &dir, 0, 1)
        .await
        .err()
        .expect("a wrong value must fail the benchmark");
    assert!(
        e.contains("wrong value") && e.contains("/leaves/l07"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_expected_value_fails_python_blosc2() {
    let dir = tampered("py", "bench_table.json", |m| {
        m["bench_rows"]["columns"]["b"]["sha256"] = "0".repeat(64).into();
    });
    let server = common::serve_dir(dir.clone()).await;
    let script = repo().join("scripts/bench_b2z_python.py");
    let base = server.base_url();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(native_harness::venv_python())
            .arg(script)
            .arg(base)
            .arg(&dir)
            .arg("table")
            .current_dir(std::env::temp_dir())
            .output()
            .expect("the venv's python runs")
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("wrong value") && stderr.contains(" b[0:10000]"),
        "{stderr}"
    );
    server.shutdown().await;
}
