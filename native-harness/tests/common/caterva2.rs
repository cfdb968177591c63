//! A real Caterva2 server (caterva2[server] 2026.9.2 from the project venv) on 127.0.0.1,
//! publishing the datasets of `tests/fixtures/gen_caterva2.py`, run by
//! `scripts/caterva2-serve.py` and stopped by PID when dropped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// A running server. Dropping it closes the launcher's stdin, waits for it to stop the
/// server (up to 10 s), then kills the launcher by PID (the server has PR_SET_PDEATHSIG).
pub struct Caterva2Server {
    /// `http://127.0.0.1:PORT/` (with the trailing slash).
    pub urlbase: String,
    /// The test user (an e-mail address, as Caterva2 names users) and its password.
    pub username: String,
    pub password: String,
    /// The generator's output: `roots/`, `expected/<root>/<path>.npy`, `manifest.json`.
    pub fixture_dir: PathBuf,
    /// The served copy of `@public` (the server's `<statedir>/public`): rewrite files here to
    /// change a dataset under a running server.
    pub public_dir: PathBuf,
    /// The server's state directory (removed by the launcher when it stops).
    pub statedir: PathBuf,
    /// PID of the server process itself (the launcher is [`Caterva2Server::launcher_pid`]).
    pub server_pid: u32,
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Caterva2Server {
    /// PID of the launcher process.
    pub fn launcher_pid(&self) -> u32 {
        self.child.id()
    }

    /// The manifest's entries (`path`, `npy`, `kind`, `dtype`, `shape`, `chunks`, ...).
    pub fn datasets(&self) -> Vec<serde_json::Value> {
        manifest(&self.fixture_dir)
    }

    /// The expected array of a Caterva2 path such as `@public/ds/f4_1d_lz4_shuffle.b2nd`
    /// (the `.npy` the generator wrote beside it).
    pub fn expected(&self, path: &str) -> chunkwise::npy::Npy {
        let entry = self
            .datasets()
            .into_iter()
            .find(|d| d["path"] == path)
            .unwrap_or_else(|| panic!("{path} is not in the manifest"));
        let npy = self.fixture_dir.join(entry["npy"].as_str().unwrap());
        chunkwise::npy::read_npy(&std::fs::read(&npy).unwrap()).unwrap()
    }
}

fn manifest(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["datasets"].as_array().unwrap().clone()
}

/// The generator's output, written once per test binary into a directory of this process.
pub fn fixture_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = super::process_dir("chunkwise-caterva2-fx-");
        let generator =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/gen_caterva2.py");
        let status = Command::new(native_harness::venv_python())
            .arg(generator)
            .arg(&dir)
            .status()
            .expect("the Python venv (scripts/setup.sh python) runs gen_caterva2.py");
        assert!(status.success(), "gen_caterva2.py failed");
        dir
    })
}

/// Starts a fresh server (its own state dir and port) with login on and the test user
/// created. Panics if the launcher fails or the server does not answer within 60 s.
pub fn start() -> Caterva2Server {
    let fixture_dir = fixture_dir().to_path_buf();
    let launcher = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/caterva2-serve.py");
    let mut child = Command::new(native_harness::venv_python())
        .arg(launcher)
        .arg("--roots")
        .arg(fixture_dir.join("roots"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the Python venv (scripts/setup.sh python) runs caterva2-serve.py");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(line) if !line.is_empty() => line,
        other => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the Caterva2 server did not start: {other:?}");
        }
    };
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    let s = |k: &str| v[k].as_str().unwrap().to_string();
    Caterva2Server {
        urlbase: s("urlbase"),
        username: s("username"),
        password: s("password"),
        public_dir: PathBuf::from(s("public_dir")),
        statedir: PathBuf::from(s("statedir")),
        server_pid: v["pid"].as_u64().unwrap() as u32,
        fixture_dir,
        stdin: child.stdin.take(),
        child,
    }
}

impl Drop for Caterva2Server {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
