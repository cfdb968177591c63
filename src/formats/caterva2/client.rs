//! The HTTP side of a Caterva2 server: URLs of its routes, the login, and how answers map
//! to errors. Requests go through [`crate::io::request::Requests`] (counted, `GET`s
//! retried); nothing here opens a connection of its own.
//!
//! Authentication (caterva2's `services/users.py`, fastapi-users' cookie transport):
//! `POST {base}/auth/jwt/login` with form fields `username` and `password` answers 204 and a
//! cookie `c2subauth` (a JWT, valid 12 h) that later requests send as `Cookie:
//! c2subauth=...`; a token given directly is sent the same way. The login happens before
//! the first request this client sends, whatever the root (a warm open that makes no request
//! logs in at its first chunk request), once; credentials and the token live in this client's memory only and are
//! never printed (`Debug` shows whether they are set).

use crate::io::request::{Answer, Method, Request, Requests};
use crate::io::IoError;
use bytes::Bytes;

/// The name of caterva2's authentication cookie.
pub const COOKIE: &str = "c2subauth";

/// How to authenticate to a Caterva2 server. Kept in memory only; `Debug` redacts it.
#[derive(Clone, PartialEq, Eq)]
pub enum Credentials {
    /// A user's name and password, for `POST auth/jwt/login`.
    Login {
        /// The user name (an e-mail address in caterva2).
        username: String,
        /// The password.
        password: String,
    },
    /// The `c2subauth` token itself (a JWT from an earlier login).
    Token(String),
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credentials::Login { .. } => f.write_str("Credentials::Login(***)"),
            Credentials::Token(_) => f.write_str("Credentials::Token(***)"),
        }
    }
}

impl Credentials {
    /// What the cache's credential fingerprint covers, as a pseudo-header (hashed with a
    /// salt, never stored: [`crate::cache::CacheCoordinator::key_for`]), so entries read
    /// with one user's credentials are not served to another's.
    pub fn fingerprint_header(&self) -> (String, String) {
        let v = match self {
            Credentials::Login { username, password } => {
                format!("login\n{username}\n{password}")
            }
            Credentials::Token(t) => format!("token\n{t}"),
        };
        ("x-chunkwise-caterva2-credentials".to_string(), v)
    }
}

/// A Caterva2 server at a URL base, with its credentials.
pub struct Client {
    base: String,
    requests: Requests,
    headers: Vec<(String, String)>,
    credentials: Option<Credentials>,
    /// The `c2subauth` token once logged in (or given).
    token: futures::lock::Mutex<Option<String>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &crate::io::url::redact_url(&self.base))
            .field("credentials", &self.credentials)
            .finish()
    }
}

/// `path` percent-encoded for a URL path: each segment's bytes other than unreserved ones,
/// `@` and the sub-delimiters RFC 3986 allows in a segment.
pub fn encode_path(path: &str) -> String {
    let mut out = String::new();
    for &b in path.trim_matches('/').as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'@' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

impl Client {
    /// A client of the server at `base` (its URL base, such as `http://127.0.0.1:8000`),
    /// sending `headers` with every request.
    pub fn new(
        base: &str,
        requests: Requests,
        headers: Vec<(String, String)>,
        credentials: Option<Credentials>,
    ) -> Client {
        let token = match &credentials {
            Some(Credentials::Token(t)) => Some(t.clone()),
            _ => None,
        };
        Client {
            base: base.trim_end_matches('/').to_string(),
            requests,
            headers,
            credentials,
            token: futures::lock::Mutex::new(token),
        }
    }

    /// The URL base (no trailing `/`).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The request headers sent with every request (the caller's, without credentials).
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// The counted requests.
    pub fn requests(&self) -> &Requests {
        &self.requests
    }

    /// `{base}/api/{route}/{path}` with `query` (`nchunk=3`, or empty).
    pub fn url(&self, route: &str, path: &str, query: &str) -> String {
        let mut u = format!("{}/api/{route}", self.base);
        if !path.is_empty() {
            u.push('/');
            u.push_str(&encode_path(path));
        }
        if !query.is_empty() {
            u.push('?');
            u.push_str(query);
        }
        u
    }

    /// Logs in with the client's username and password, if it has them and has no token
    /// yet; returns the token to send.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] when the server refuses the credentials (caterva2
    /// answers 400 `LOGIN_BAD_CREDENTIALS`; the message never holds them), or answers no
    /// `c2subauth` cookie; I/O errors of the request. Never retried.
    async fn token(&self) -> crate::Result<Option<String>> {
        let mut held = self.token.lock().await;
        if held.is_some() {
            return Ok(held.clone());
        }
        let Some(Credentials::Login { username, password }) = &self.credentials else {
            return Ok(None);
        };
        let url = format!("{}/auth/jwt/login", self.base);
        let answer = self
            .requests
            .send(&Request {
                url: url.clone(),
                method: Method::PostForm(vec![
                    ("username".into(), username.clone()),
                    ("password".into(), password.clone()),
                ]),
                headers: self.headers.clone(),
                limit: 64 * 1024,
            })
            .await?;
        if !(200..300).contains(&answer.status) {
            let detail = detail_of(&answer.body);
            return Err(crate::Error::InvalidArgument(format!(
                "{url}: the login was refused (HTTP {}{}): check the username and password",
                answer.status,
                detail.map(|d| format!(", {d}")).unwrap_or_default()
            )));
        }
        let token = answer
            .cookies
            .iter()
            .find(|(k, _)| k == COOKIE)
            .map(|(_, v)| v.clone());
        // A browser keeps the cookie itself and hides it from scripts: its later requests
        // carry it without our header.
        if token.is_none() && !cfg!(target_arch = "wasm32") {
            return Err(crate::Error::InvalidArgument(format!(
                "{url}: the login answered HTTP {} without a {COOKIE} cookie",
                answer.status
            )));
        }
        *held = token.clone();
        Ok(token)
    }

    /// `GET url` (a route of this server) with the credentials, at most `limit` body bytes.
    /// `what` names the dataset (or listing) in errors.
    ///
    /// # Errors
    /// 404 is [`IoError::NotFound`] naming `what`; 401 and 403 (and any other status but
    /// 2xx) are [`IoError::HttpStatus`] on `url`; those of the login and the request.
    pub async fn get(&self, url: &str, what: &str, limit: u64) -> crate::Result<Answer> {
        let mut headers = self.headers.clone();
        if let Some(t) = self.token().await? {
            headers.push(("Cookie".into(), format!("{COOKIE}={t}")));
        }
        let answer = self
            .requests
            .send(&Request {
                url: url.to_string(),
                method: Method::Get,
                headers,
                limit,
            })
            .await?;
        match answer.status {
            200..=299 => Ok(answer),
            404 => Err(IoError::NotFound {
                location: what.to_string(),
            }
            .into()),
            status => Err(IoError::HttpStatus {
                location: url.to_string(),
                status,
            }
            .into()),
        }
    }

    /// The JSON body of `GET url`, parsed as `T`.
    ///
    /// # Errors
    /// As [`Client::get`]; [`crate::formats::FormatError::Invalid`] for a body that is not
    /// the JSON of `T`.
    pub async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        what: &str,
    ) -> crate::Result<(T, Answer)> {
        let answer = self.get(url, what, super::api::MAX_INFO_BYTES).await?;
        // Through a `serde_json::Value`: the seeds of the cache records deserialise these
        // types from a `Value` already, so parsing the body straight into `T` would add a
        // second copy of every deserialiser (6 to 7 KB of the gzipped wasm module).
        let parsed = serde_json::from_slice::<serde_json::Value>(&answer.body)
            .and_then(serde_json::from_value)
            .map_err(|e| crate::formats::FormatError::Invalid {
                location: url.to_string(),
                format: "caterva2",
                detail: format!("not the expected JSON: {e}"),
            })?;
        Ok((parsed, answer))
    }

    /// The body of `GET url` as bytes.
    ///
    /// # Errors
    /// As [`Client::get`].
    pub async fn get_bytes(&self, url: &str, what: &str, limit: u64) -> crate::Result<Bytes> {
        Ok(self.get(url, what, limit).await?.body)
    }
}

/// FastAPI's `{"detail": ...}` of an error answer, as text, if it has one (short).
fn detail_of(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let d = v.get("detail")?;
    let s = d
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| d.to_string());
    Some(s.chars().take(200).collect())
}
