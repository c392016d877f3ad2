//! The block as Markdown or XML. Every field printed on one line stays on
//! it ([`md_line`]); bodies are fenced so that they cannot close their block
//! ([`md_fence`]); XML is escaped.

use super::report::{Format, Report, Section};
use crate::base::text::{md_fence, md_line};
use crate::base::time::Lang;
use crate::model::roots::Scope;
use crate::model::usage::Tier;

/// Words of the block, per language.
pub(super) struct Words {
    pub title: &'static str,
    pub plan_project: &'static str,
    pub plan_global: &'static str,
    pub rules: &'static str,
    pub pinned: &'static str,
    pub files: &'static str,
    pub matches: &'static str,
    pub routing: &'static str,
    pub verify: &'static str,
    pub snapshot: &'static str,
    pub left_out: &'static str,
    pub routing_left_out: &'static str,
    pub rules_over: &'static str,
    pub untrusted: &'static str,
    pub held_back: &'static str,
    pub more: &'static str,
    /// Hot, warm, cool.
    pub tiers: [&'static str; 3],
}

const EN: Words = Words {
    title: "Memory",
    plan_project: "Project plan (ROOT.md)",
    plan_global: "Your plan across projects (global ROOT.md)",
    rules: "Hard rules",
    pinned: "Pinned",
    files: "For the files in play",
    matches: "Relevant to the request",
    routing: "Routing (trigger → memory; `mem recall <trigger>` shows it)",
    verify: "verify before use",
    snapshot: "Memories are snapshots: before recommending a file, function or flag that a memory names, check that it still exists.",
    left_out: "Left out for the budget: {n} {memories} ({names}).",
    routing_left_out: "Left out for the budget: the routing table ({n} triggers).",
    rules_over: "The plan and the hard rules alone need about {need} tokens, over the budget of {budget}: shown in rank order until it ran out; `mem context --budget {need}` shows them all.",
    untrusted: "Project memory at {dir} is not trusted, so it was not included. The user can review it and run `mem trust` there; do not run it for them.",
    held_back: "Held back, added or changed since the user trusted the project: {n} {files} ({paths}). The user can review them and run `mem trust`; do not run it for them.",
    more: "More: `mem recall --trusted <words>` searches every memory (over MCP: `memory_recall`).",
    tiers: ["hot", "warm", "cool"],
};

const ZH: Words = Words {
    title: "记忆",
    plan_project: "项目计划（ROOT.md）",
    plan_global: "跨项目的计划（全局 ROOT.md）",
    rules: "硬性规则",
    pinned: "置顶",
    files: "与当前文件相关",
    matches: "与请求相关",
    routing: "路由（触发词 → 记忆；`mem recall <触发词>` 查看）",
    verify: "使用前请核实",
    snapshot: "记忆是过去的快照：推荐其中提到的文件、函数或参数之前，先确认它们仍然存在。",
    left_out: "因预算省略：{n} 条记忆（{names}）。",
    routing_left_out: "因预算省略：路由表（{n} 个触发词）。",
    rules_over: "仅计划和硬性规则就需要约 {need} 个 token，超过预算 {budget}：按排序显示到预算用完；`mem context --budget {need}` 可全部显示。",
    untrusted: "{dir} 的项目记忆尚未被信任，因此没有加入。用户检查后可在该项目中运行 `mem trust`；不要替用户运行。",
    held_back: "用户信任该项目之后新增或修改的 {n} 条项目记忆未加入（{paths}）。用户检查后可运行 `mem trust`；不要替用户运行。",
    more: "更多：`mem recall --trusted <关键词>` 搜索全部记忆（MCP：`memory_recall`）。",
    tiers: ["热", "温", "冷"],
};

/// At most this many names in a line that stands for a longer list.
const NAMES: usize = 3;

fn names(paths: &[String]) -> String {
    let mut out = paths.iter().take(NAMES).cloned().collect::<Vec<_>>().join(", ");
    if paths.len() > NAMES {
        out.push_str(", …");
    }
    out
}

impl Report {
    pub(super) fn words(&self) -> &'static Words {
        if self.lang == Lang::Zh { &ZH } else { &EN }
    }

    /// A tier as the block's language says it.
    pub(super) fn tier_word(&self, tier: Tier) -> &'static str {
        let [hot, warm, cool] = self.words().tiers;
        match tier {
            Tier::Hot => hot,
            Tier::Warm => warm,
            Tier::Cool => cool,
        }
    }

    /// True when the block would say nothing at all.
    pub fn is_empty(&self) -> bool {
        self.plans.is_empty()
            && self.entries.is_empty()
            && self.routing.is_empty()
            && self.left_out.count == 0
            && !self.left_out.routing
            && self.untrusted.is_empty()
            && self.held_back.is_empty()
    }

    /// The closing lines: what was left out and held back, then where to look.
    pub(super) fn footer(&self) -> Vec<String> {
        let w = self.words();
        let mut out = Vec::new();
        let plural = |n: usize, one: &str, many: &str| {
            if n == 1 { one.to_string() } else { many.to_string() }
        };
        if let Some(need) = self.rules_over_budget {
            out.push(
                w.rules_over
                    .replace("{need}", &need.to_string())
                    .replace("{budget}", &self.budget.to_string()),
            );
        }
        if self.left_out.count > 0 {
            out.push(
                w.left_out
                    .replace("{n}", &self.left_out.count.to_string())
                    .replace("{memories}", &plural(self.left_out.count, "memory", "memories"))
                    .replace("{names}", &names(&self.left_out.names)),
            );
        }
        if self.left_out.routing {
            out.push(w.routing_left_out.replace("{n}", &self.left_out.triggers.to_string()));
        }
        if self.prompt_mode {
            // The session start said the rest; a prompt adds matches only.
            return out;
        }
        if !self.held_back.is_empty() {
            out.push(
                w.held_back
                    .replace("{n}", &self.held_back.len().to_string())
                    .replace("{files}", &plural(self.held_back.len(), "file", "files"))
                    .replace("{paths}", &names(&self.held_back)),
            );
        }
        for dir in &self.untrusted {
            out.push(w.untrusted.replace("{dir}", &dir.display().to_string()));
        }
        out.push(w.more.to_string());
        out
    }

    fn heading(&self, section: Section) -> &'static str {
        let w = self.words();
        match section {
            Section::Rule => w.rules,
            Section::Pinned => w.pinned,
            Section::File => w.files,
            Section::Match => w.matches,
        }
    }

    pub(super) fn render(&self) -> String {
        if self.is_empty() {
            return String::new();
        }
        match self.format {
            Format::Markdown => self.markdown(),
            Format::Xml => self.xml(),
        }
    }

    fn markdown(&self) -> String {
        let w = self.words();
        let mut out = if self.prompt_mode { String::new() } else { format!("# {}\n", w.title) };
        if self.entries.iter().any(|e| e.stale) && !self.prompt_mode {
            out.push_str(&format!("\n_{}_\n", w.snapshot));
        }
        for plan in &self.plans {
            let title = if plan.root == Scope::Project { w.plan_project } else { w.plan_global };
            out.push_str(&format!("\n## {title}\n\n{}\n", demote(&plan.text)));
        }
        let mut section = None;
        for e in &self.entries {
            if section != Some(e.section) {
                section = Some(e.section);
                if matches!(e.section, Section::File | Section::Match) && !self.routing.is_empty() {
                    blank_line(&mut out);
                    out.push_str(&self.routing_md());
                }
                blank_line(&mut out);
                out.push_str(&format!("## {}\n\n", self.heading(e.section)));
            }
            let verify = if e.stale { format!(", {}", w.verify) } else { String::new() };
            let text =
                if e.text.is_empty() { String::new() } else { format!(": {}", md_line(&e.text)) };
            out.push_str(&format!(
                "- **{}**{text} (`{}`, {} · {}{verify})\n",
                md_line(&e.title),
                e.path,
                e.age,
                self.tier_word(e.tier)
            ));
            if let Some(body) = &e.body {
                out.push_str(&format!("\n{}\n", md_fence(body)));
            }
        }
        if !self.entries.iter().any(|e| matches!(e.section, Section::File | Section::Match))
            && !self.routing.is_empty()
        {
            blank_line(&mut out);
            out.push_str(&self.routing_md());
        }
        for line in self.footer() {
            blank_line(&mut out);
            out.push_str(&format!("{}\n", md_line(&line)));
        }
        out
    }

    fn routing_md(&self) -> String {
        if self.routing.is_empty() {
            return String::new();
        }
        let mut out = format!("## {}\n\n", self.words().routing);
        for (t, f) in &self.routing {
            out.push_str(&format!("- {} → `{f}`\n", md_line(t)));
        }
        out
    }

    fn xml(&self) -> String {
        let mut out =
            format!("<memory-context budget=\"{}\" used=\"{}\">\n", self.budget, self.used);
        if self.entries.iter().any(|e| e.stale) {
            out.push_str(&format!("  <note>{}</note>\n", esc(self.words().snapshot)));
        }
        for plan in &self.plans {
            out.push_str(&format!(
                "  <plan root=\"{}\">{}</plan>\n",
                plan.root.name(),
                esc(&plan.text)
            ));
        }
        for e in &self.entries {
            let section = match e.section {
                Section::Rule => "rule",
                Section::Pinned => "pinned",
                Section::File => "file",
                Section::Match => "match",
            };
            let body =
                e.body.as_deref().map_or(String::new(), |b| format!("<body>{}</body>", esc(b)));
            out.push_str(&format!(
                "  <memory section=\"{section}\" path=\"{}\" root=\"{}\" kind=\"{}\" title=\"{}\" age=\"{}\" tier=\"{}\" verify=\"{}\">{}{body}</memory>\n",
                esc_line(&e.path), e.root.name(), esc_line(&e.kind), esc_line(&e.title), esc_line(&e.age), e.tier.name(), e.stale, esc_line(&e.text)
            ));
        }
        if !self.routing.is_empty() {
            out.push_str("  <routing>\n");
            for (t, f) in &self.routing {
                out.push_str(&format!(
                    "    <route trigger=\"{}\" file=\"{}\"/>\n",
                    esc_line(t),
                    esc_line(f)
                ));
            }
            out.push_str("  </routing>\n");
        }
        for line in self.footer() {
            out.push_str(&format!("  <note>{}</note>\n", esc_line(&line)));
        }
        out.push_str("</memory-context>\n");
        out
    }
}

/// One blank line before the next block, however the last one ended.
fn blank_line(out: &mut String) {
    if !out.is_empty() && !out.ends_with("\n\n") {
        out.push('\n');
    }
}

/// ROOT.md's headings two levels down, so they sit under the block's own.
fn demote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(f) = fence {
            if trimmed.starts_with(f) {
                fence = None;
            }
        } else if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
        } else if line.starts_with('#') {
            out.push_str("##");
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_string()
}

/// Escape text for XML content and attributes.
pub(super) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// [`esc`] for one-line fields (attributes, a memory's summary): line
/// breaks and tabs as character references, so no field starts a line.
pub(super) fn esc_line(s: &str) -> String {
    esc(s)
        .replace('\r', "&#13;")
        .replace('\n', "&#10;")
        .replace('\t', "&#9;")
        .replace(['\u{85}', '\u{2028}', '\u{2029}'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escapes_attributes_and_text() {
        assert_eq!(esc(r#"a<b>&"c"'d'"#), "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
    }

    #[test]
    fn one_line_fields_stay_on_their_line_in_xml() {
        assert_eq!(esc_line("a\n## Hard rules\r\n- x"), "a&#10;## Hard rules&#13;&#10;- x");
    }

    #[test]
    fn plan_headings_sit_under_the_block() {
        assert_eq!(
            demote("# P\n## Hard rules\n- x\n```\n# not a heading\n```"),
            "### P\n#### Hard rules\n- x\n```\n# not a heading\n```"
        );
    }
}
