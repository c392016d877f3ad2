//! A stand-in for the Hugging Face Hub, in the test process, on
//! 127.0.0.1: it serves a model folder in the Hub's layout,
//! `/<repo>/resolve/<revision>/<file>`, as the Hub answers it. A regular
//! file comes with its git blob id as `ETag` and the commit as
//! `X-Repo-Commit`; an LFS file (the weights, the tokenizer) is a 302 to
//! `/cdn/<sha256>` carrying `X-Linked-Etag` (its sha256) and
//! `X-Linked-Size`, and the bytes come from there. HEAD and GET, `Range`
//! (206 with `Content-Range`, 416 past the end), 404 for an unknown repo,
//! revision or file. It can cut a file's body short, serve it with a
//! byte changed, or name another etag the second time it is asked about a
//! file, and keeps a log of what it was asked.
#![cfg(feature = "semantic")]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

/// The commit every served revision resolves to.
pub const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// A request as the stand-in saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub range: Option<String>,
    pub authorization: Option<String>,
}

struct Served {
    name: String,
    path: PathBuf,
    size: u64,
    /// The sha256 (an LFS file) or the git blob id (a regular one).
    etag: String,
    lfs: bool,
}

#[derive(Default)]
struct State {
    repo: String,
    files: Vec<Served>,
    cut: Mutex<Option<String>>,
    corrupt: Mutex<Option<String>>,
    /// A file, and the etag given for it once it was asked about once.
    lie: Mutex<Option<(String, String)>>,
    log: Mutex<Vec<Seen>>,
}

pub struct Hub {
    pub endpoint: String,
    addr: SocketAddr,
    state: Arc<State>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The digest of a file as the Hub names it; the model's files are the
/// same in every test, so each is hashed once.
fn digest(path: &Path, lfs: bool) -> String {
    static DIGESTS: OnceLock<Mutex<HashMap<(PathBuf, bool), String>>> = OnceLock::new();
    let map = DIGESTS.get_or_init(Default::default);
    if let Some(d) = map.lock().unwrap().get(&(path.to_path_buf(), lfs)) {
        return d.clone();
    }
    // Which digest `verify` makes is told by the etag's length.
    let kind = if lfs { "0".repeat(64) } else { "0".repeat(40) };
    let d = mem::semantic::hub::verify(path, &kind).unwrap();
    map.lock().unwrap().insert((path.to_path_buf(), lfs), d.clone());
    d
}

impl Hub {
    /// Serve `names` from the folder `dir` as the repo `repo`.
    pub fn serve(repo: &str, dir: &Path, names: &[&str]) -> Hub {
        let files = names
            .iter()
            .map(|name| {
                let path = dir.join(name);
                let lfs = name.ends_with(".safetensors") || *name == "tokenizer.json";
                let size = std::fs::metadata(&path).unwrap().len();
                let etag = digest(&path, lfs);
                Served { name: name.to_string(), path, size, etag, lfs }
            })
            .collect();
        let state = Arc::new(State { repo: repo.into(), files, ..State::default() });
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (state, stop) = (Arc::clone(&state), Arc::clone(&stop));
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let state = Arc::clone(&state);
                    std::thread::spawn(move || {
                        let _ = answer(&state, addr, stream);
                    });
                }
            })
        };
        Hub { endpoint: format!("http://{addr}"), addr, state, stop, thread: Some(thread) }
    }

    /// Cut every GET of `name`'s bytes halfway, until [`Hub::mend`].
    pub fn cut(&self, name: &str) {
        *self.state.cut.lock().unwrap() = Some(name.into());
    }

    /// Serve `name` with one byte changed, under its true etag.
    pub fn corrupt(&self, name: &str) {
        *self.state.corrupt.lock().unwrap() = Some(name.into());
    }

    /// Name `etag` for the regular file `name` whenever it is asked about
    /// (`Range: bytes=0-0`) after the first time: a Hub that says one
    /// thing to a check and another to the download.
    pub fn lie(&self, name: &str, etag: &str) {
        *self.state.lie.lock().unwrap() = Some((name.into(), etag.into()));
    }

    /// Serve everything whole again.
    pub fn mend(&self) {
        *self.state.cut.lock().unwrap() = None;
        *self.state.corrupt.lock().unwrap() = None;
    }

    /// The etag `name` is served with.
    pub fn etag(&self, name: &str) -> String {
        self.state.files.iter().find(|f| f.name == name).unwrap().etag.clone()
    }

    /// What was asked so far.
    pub fn log(&self) -> Vec<Seen> {
        self.state.log.lock().unwrap().clone()
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One request, one answer, then the connection is closed.
fn answer(state: &State, addr: SocketAddr, stream: TcpStream) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, path) =
        (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let seen = Seen {
        method: method.clone(),
        path: path.clone(),
        range: headers.get("range").cloned(),
        authorization: headers.get("authorization").cloned(),
    };
    state.log.lock().unwrap().push(seen.clone());
    let mut out = std::io::BufWriter::new(stream);
    let head = method == "HEAD";
    if let Some(sha) = path.strip_prefix("/cdn/") {
        let Some(file) = state.files.iter().find(|f| f.lfs && f.etag == sha) else {
            return status(&mut out, 404, &[("X-Error-Code", "EntryNotFound")]);
        };
        return body(state, &mut out, file, seen.range.as_deref(), head, &[]);
    }
    let Some(rest) = path.strip_prefix(&format!("/{}/resolve/", state.repo)) else {
        return status(&mut out, 404, &[("X-Error-Code", "RepoNotFound")]);
    };
    let (revision, name) = rest.split_once('/').unwrap_or((rest, ""));
    if revision != "main" && revision != COMMIT {
        return status(&mut out, 404, &[("X-Error-Code", "RevisionNotFound")]);
    }
    let Some(file) = state.files.iter().find(|f| f.name == name) else {
        return status(&mut out, 404, &[("X-Error-Code", "EntryNotFound")]);
    };
    if file.lfs {
        let location = format!("http://{addr}/cdn/{}", file.etag);
        let (etag, size) = (format!("\"{}\"", file.etag), file.size.to_string());
        return status(
            &mut out,
            302,
            &[
                ("Location", &location),
                ("X-Repo-Commit", COMMIT),
                ("X-Linked-Etag", &etag),
                ("X-Linked-Size", &size),
                ("ETag", "\"a-pointer-file\""),
            ],
        );
    }
    let mut etag = format!("\"{}\"", file.etag);
    if let Some((_, lie)) = state.lie.lock().unwrap().as_ref().filter(|(n, _)| *n == file.name) {
        let log = state.log.lock().unwrap();
        let asked = |s: &&Seen| s.path == path && s.range.as_deref() == Some("bytes=0-0");
        if seen.range.as_deref() == Some("bytes=0-0") && log.iter().filter(asked).count() > 1 {
            etag = format!("\"{lie}\"");
        }
    }
    body(
        state,
        &mut out,
        file,
        seen.range.as_deref(),
        head,
        &[("ETag", &etag), ("X-Repo-Commit", COMMIT)],
    )
}

fn status(out: &mut impl Write, code: u16, headers: &[(&str, &str)]) -> std::io::Result<()> {
    let reason = match code {
        302 => "Found",
        404 => "Not Found",
        416 => "Range Not Satisfiable",
        _ => "",
    };
    write!(out, "HTTP/1.1 {code} {reason}\r\nContent-Length: 0\r\nConnection: close\r\n")?;
    for (k, v) in headers {
        write!(out, "{k}: {v}\r\n")?;
    }
    write!(out, "\r\n")?;
    out.flush()
}

/// The file's bytes, or the range asked for.
fn body(
    state: &State,
    out: &mut impl Write,
    file: &Served,
    range: Option<&str>,
    head: bool,
    extra: &[(&str, &str)],
) -> std::io::Result<()> {
    let size = file.size;
    let (start, end) = match range.and_then(|r| r.strip_prefix("bytes=")) {
        Some(spec) => {
            let (a, b) = spec.split_once('-').unwrap_or((spec, ""));
            let start: u64 = a.parse().unwrap_or(0);
            let end: u64 = b.parse().map(|e: u64| e.min(size - 1)).unwrap_or(size - 1);
            if start >= size {
                let unsatisfied = format!("bytes */{size}");
                return status(out, 416, &[("Content-Range", &unsatisfied)]);
            }
            (start, end)
        }
        None => (0, size - 1),
    };
    let len = end + 1 - start;
    if range.is_some() {
        write!(
            out,
            "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {start}-{end}/{size}\r\n"
        )?;
    } else {
        write!(out, "HTTP/1.1 200 OK\r\n")?;
    }
    write!(out, "Content-Length: {len}\r\nAccept-Ranges: bytes\r\nConnection: close\r\n")?;
    for (k, v) in extra {
        write!(out, "{k}: {v}\r\n")?;
    }
    write!(out, "\r\n")?;
    if head {
        return out.flush();
    }
    let cut = state.cut.lock().unwrap().as_deref() == Some(&file.name) && len > 1;
    let corrupt = state.corrupt.lock().unwrap().as_deref() == Some(&file.name);
    let send = if cut { len / 2 } else { len };
    let mut source = std::fs::File::open(&file.path)?;
    source.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity(send as usize);
    source.take(send).read_to_end(&mut bytes)?;
    let middle = size / 2;
    if corrupt && (start..start + send).contains(&middle) {
        bytes[(middle - start) as usize] ^= 0xff;
    }
    out.write_all(&bytes)?;
    out.flush()
    // A cut body ends here: the connection closes short of Content-Length.
}
