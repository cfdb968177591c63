//! `chunkwise serve` as a process: ready line on stdout, serving, clean exit on SIGTERM.

use chunkwise::io::http::HttpSource;
use chunkwise::io::{ByteRange, RangeSource};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[cfg(unix)]
#[tokio::test]
async fn prints_ready_line_serves_and_stops_on_sigterm() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut child = Command::new(env!("CARGO_BIN_EXE_chunkwise"))
        .args([
            "serve".as_ref(),
            "--root".as_ref(),
            root.as_os_str(),
            "--port".as_ref(),
            "0".as_ref(),
        ])
        .arg("--quiet")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let canonical = std::fs::canonicalize(&root).unwrap();
    let prefix = format!("serving {} at http://127.0.0.1:", canonical.display());
    assert!(
        line.starts_with(&prefix) && line.ends_with("/\n"),
        "{line:?}"
    );
    let base = line.trim_end().rsplit(' ').next().unwrap().to_string();

    let src = HttpSource::new(format!("{base}io/pattern-10.bin")).unwrap();
    let f = src.read(ByteRange::bounded(1..3)).await.unwrap();
    assert_eq!(f.bytes.len(), 2);
    assert_eq!(f.info.len, 10);

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let t = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status:?}");
            break;
        }
        if t.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            panic!("server did not stop on SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
