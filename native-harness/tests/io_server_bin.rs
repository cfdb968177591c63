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

/// Clients that hang up in the middle of a body (here 20 of them, each reading a few bytes
/// of a 16 MiB whole-file answer under `--ignore-range`) do not end the server, even when
/// whoever read its output has gone too (stdout and the stderr log closed, as under
/// `chunkwise serve 2>&1 | head -1`): writing to a closed connection or a closed log is an
/// error for that write, not SIGPIPE for the process.
#[cfg(unix)]
#[tokio::test]
async fn survives_clients_that_close_mid_body() {
    use std::io::{Read, Write};
    let tmp = tempfile::tempdir().unwrap();
    let big: Vec<u8> = (0..16u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(tmp.path().join("big.bin"), &big).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_chunkwise"))
        .args(["serve".as_ref(), "--root".as_ref(), tmp.path().as_os_str()])
        .args(["--port", "0", "--ignore-range"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line.trim_end().rsplit(' ').next().unwrap().to_string();
    let addr = base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();

    for i in 0..20 {
        let mut s = std::net::TcpStream::connect(&addr)
            .unwrap_or_else(|e| panic!("connection {i}: {e}; server {:?}", child.try_wait()));
        s.write_all(b"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\n\r\n")
            .unwrap();
        let mut head = [0u8; 64];
        if let Err(e) = s.read_exact(&mut head) {
            std::thread::sleep(Duration::from_millis(100));
            panic!("request {i}: {e}; server {:?}", child.try_wait());
        }
        assert!(head.starts_with(b"HTTP/1.1 200"), "{head:?}");
        drop(s);
    }
    // Time for the server to write into the closed connections.
    std::thread::sleep(Duration::from_millis(500));
    let alive = child.try_wait().unwrap();
    if alive.is_some() {
        panic!("the server died: {alive:?}");
    }

    let src = HttpSource::new(format!("{base}big.bin")).unwrap();
    let whole = src.read(ByteRange::bounded(0..(16 << 20))).await.unwrap();
    assert!(
        whole.bytes[..] == big[..],
        "the answer differs from the file"
    );

    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            panic!("server did not stop on SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
