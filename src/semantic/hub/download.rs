//! One file's bytes from the Hub into its blob, by the etag, size and
//! commit `mem model pull` asked about and checked: the Hub's client would
//! ask again before downloading and take a second answer unchecked (an
//! etag or commit naming a path out of the cache, a size past the limit).
//! The download goes to `<blob>.part` under `<blob>.lock`, goes on from the
//! end of a part already there (a `Range` request), reads at most the size
//! asked about, and is renamed to the blob once whole.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use hf_hub::api::Progress;
use hf_hub::api::sync::ApiError;
use ureq::Agent;
use ureq::config::RedirectAuthHeaders;

use super::local::Bar;

/// Tries after the first, as the Hub's client makes them.
const RETRIES: u32 = 2;

/// A client like the Hub's: a token only to the host asked (a redirect to
/// the CDN does not carry it).
pub(super) fn agent() -> Agent {
    Agent::config_builder()
        .redirect_auth_headers(RedirectAuthHeaders::SameHost)
        .user_agent(format!("mem/{}", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

/// Download `url` (`size` bytes of `name`) into `blob`, with `token` if
/// any; the errors are the Hub client's, worded as its own are.
pub(super) fn download(
    token: Option<&str>,
    agent: &Agent,
    url: &str,
    blob: &Path,
    size: u64,
    bar: &mut Bar,
    name: &str,
) -> Result<(), ApiError> {
    if let Some(parent) = blob.parent() {
        fs::create_dir_all(parent)?;
    }
    let lock_path = blob.with_extension("lock");
    let lock = File::create(&lock_path)?;
    let mut tries = 0;
    while lock.try_lock().is_err() {
        tries += 1;
        if tries > 5 {
            return Err(ApiError::LockAcquisition(lock_path));
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    let part = part(blob);
    let mut file = OpenOptions::new().create(true).append(true).open(&part)?;
    if file.metadata()?.len() > size {
        file.set_len(0)?;
    }
    let mut tries = 0;
    loop {
        match fetch(token, agent, url, &mut file, (name, size), bar) {
            Ok(()) => break,
            // The Hub's answer (404, 403, …) is the same when asked again.
            Err(e @ ApiError::RequestError(_)) if is_status(&e) => return Err(e),
            Err(e) if tries >= RETRIES => return Err(ApiError::TooManyRetries(Box::new(e))),
            Err(_) => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(300 * u64::from(tries)));
            }
        }
    }
    bar.finish();
    drop(file);
    fs::rename(&part, blob)?;
    Ok(())
}

/// A download's part, beside its blob.
pub(super) fn part(blob: &Path) -> PathBuf {
    blob.with_extension("part")
}

fn is_status(e: &ApiError) -> bool {
    matches!(e, ApiError::RequestError(e) if matches!(**e, ureq::Error::StatusCode(_)))
}

/// One request for what `file` lacks of the `size` bytes of `name`.
fn fetch(
    token: Option<&str>,
    agent: &Agent,
    url: &str,
    file: &mut File,
    (name, size): (&str, u64),
    bar: &mut Bar,
) -> Result<(), ApiError> {
    let kept = file.metadata()?.len();
    if kept == size {
        return Ok(());
    }
    let mut request = agent.get(url).header("Range", format!("bytes={kept}-"));
    if let Some(token) = token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    let response = request.call().map_err(Box::new)?;
    let from = if response.status().as_u16() == 206 { kept } else { 0 };
    if from == 0 {
        // The whole file came back: what was kept is written again.
        file.set_len(0)?;
    }
    file.seek(SeekFrom::End(0))?;
    bar.init(size as usize, name);
    bar.update(from as usize);
    let mut body = response.into_body().into_reader().take(size - from);
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = body.read(&mut buf)?;
        if n == 0 {
            break;
        }
        file.write_all(&buf[..n])?;
        bar.update(n);
    }
    file.flush()?;
    if file.metadata()?.len() < size {
        let short = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the body ended early");
        return Err(ApiError::RequestError(Box::new(ureq::Error::Io(short))));
    }
    Ok(())
}
