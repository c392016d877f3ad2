//! Reading the crate's source for `tests/architecture.rs`: each file's
//! module path, its code (comments, strings and `#[cfg(test)]` items
//! blanked, lines kept), the modules it names, and its functions' lengths.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One source file.
pub struct Module {
    /// `cache::fresh` for `src/cache/fresh.rs` and `src/cache/fresh/mod.rs`.
    pub path: String,
    pub file: PathBuf,
    /// The code, without comments, string contents and test items.
    pub code: String,
    /// The other modules of the crate it names.
    pub edges: BTreeSet<String>,
}

/// Every module under `src` but the crate roots (`lib.rs`, `main.rs`),
/// with its edges.
pub fn modules(src: &Path) -> Vec<Module> {
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    files.retain(|f| f.parent() != Some(src) || !(f.ends_with("lib.rs") || f.ends_with("main.rs")));
    let paths: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();
    files
        .into_iter()
        .map(|file| {
            let path = module_of(src, &file);
            let text = std::fs::read_to_string(&file).unwrap();
            let code = without_test_items(&blank(&text));
            let edges = paths_named(&path, &code, &paths)
                .iter()
                .filter_map(|p| target(p, &paths))
                .filter(|t| *t != path)
                .collect();
            Module { path, file, code, edges }
        })
        .collect()
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> =
        rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts.join("::")
}

/// The module a path lands in: its longest prefix that is a module.
fn target(path: &str, modules: &BTreeSet<String>) -> Option<String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len()).rev().map(|n| parts[..n].join("::")).find(|m| modules.contains(m))
}

/// `text` with comments and the contents of string and character literals
/// turned to spaces (line breaks kept, so lines still count).
pub fn blank(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let keep_lines = |s: &[char], out: &mut String| {
        out.extend(s.iter().map(|&ch| if ch == '\n' { '\n' } else { ' ' }));
    };
    let mut i = 0;
    while i < c.len() {
        let end = match c[i] {
            '/' if c.get(i + 1) == Some(&'/') => {
                (i..c.len()).find(|&k| c[k] == '\n').unwrap_or(c.len())
            }
            '/' if c.get(i + 1) == Some(&'*') => block_comment_end(&c, i),
            'r' | 'b' if !ident_before(&c, i) && raw_string_at(&c, i).is_some() => {
                raw_string_at(&c, i).unwrap()
            }
            '"' => string_end(&c, i),
            '\'' => char_end(&c, i).unwrap_or(i + 1),
            _ => {
                out.push(c[i]);
                i += 1;
                continue;
            }
        };
        let quoted = c[i] == '"' || c[i] == '\'' || c[i] == 'r' || c[i] == 'b';
        if quoted && end > i + 1 {
            // Keep the quotes, so a literal still separates tokens.
            out.push(' ');
            keep_lines(&c[i + 1..end - 1], &mut out);
            out.push(' ');
        } else {
            keep_lines(&c[i..end], &mut out);
        }
        i = end;
    }
    out
}

fn ident_before(c: &[char], i: usize) -> bool {
    i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_')
}

/// The end (exclusive) of a `/* … */` comment at `i`, nested ones included.
fn block_comment_end(c: &[char], i: usize) -> usize {
    let (mut depth, mut k) = (0, i);
    while k + 1 < c.len() {
        if c[k] == '/' && c[k + 1] == '*' {
            depth += 1;
            k += 2;
        } else if c[k] == '*' && c[k + 1] == '/' {
            depth -= 1;
            k += 2;
            if depth == 0 {
                return k;
            }
        } else {
            k += 1;
        }
    }
    c.len()
}

/// The end of a raw or byte string (`r"…"`, `r#"…"#`, `b"…"`, `br#"…"#`)
/// starting at `i`, if one does.
fn raw_string_at(c: &[char], i: usize) -> Option<usize> {
    let mut k = i;
    if c[k] == 'b' {
        k += 1;
        if c.get(k) == Some(&'"') {
            return Some(string_end(c, k));
        }
        if c.get(k) == Some(&'\'') {
            return char_end(c, k);
        }
    }
    if c.get(k) != Some(&'r') {
        return None;
    }
    k += 1;
    let hashes = c[k..].iter().take_while(|&&ch| ch == '#').count();
    k += hashes;
    if c.get(k) != Some(&'"') {
        return None;
    }
    k += 1;
    while k < c.len() {
        if c[k] == '"' && c[k + 1..].iter().take(hashes).filter(|&&ch| ch == '#').count() == hashes
        {
            return Some(k + 1 + hashes);
        }
        k += 1;
    }
    Some(c.len())
}

/// The end of a `"…"` string at `i`, escapes skipped.
fn string_end(c: &[char], i: usize) -> usize {
    let mut k = i + 1;
    while k < c.len() {
        match c[k] {
            '\\' => k += 2,
            '"' => return k + 1,
            _ => k += 1,
        }
    }
    c.len()
}

/// The end of a character literal at `i` (`'x'`, `'\n'`, `'\u{1F600}'`);
/// None for a lifetime (`'a`).
fn char_end(c: &[char], i: usize) -> Option<usize> {
    if c.get(i + 1) == Some(&'\\') {
        let close = (i + 2..c.len().min(i + 14)).find(|&k| c[k] == '\'')?;
        return Some(close + 1);
    }
    (c.get(i + 2) == Some(&'\'')).then_some(i + 3)
}

/// `code` without the items marked `#[cfg(test)]`: the attribute, any more
/// attributes, then the item up to its `;` or its closing brace. The
/// braces are counted in code whose strings and comments are blank.
pub fn without_test_items(code: &str) -> String {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "#[cfg(test)]" {
            out.push(lines[i]);
            i += 1;
            continue;
        }
        i += 1;
        while i < lines.len() && lines[i].trim_start().starts_with("#[") {
            i += 1;
        }
        let mut depth = 0i32;
        let mut opened = false;
        while i < lines.len() {
            let line = lines[i];
            opened |= line.contains('{');
            depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
            i += 1;
            if depth <= 0 && (opened || line.trim_end().ends_with(';')) {
                break;
            }
        }
    }
    out.join("\n")
}

/// A token of blanked code: a word, `::`, or one other character.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Path,
    Punct(char),
}

/// The tokens of `code`, each with its line (from 1).
fn tokens(code: &str) -> Vec<(Token, usize)> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push((Token::Word(c[start..i].iter().collect()), line));
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push((Token::Path, line));
            i += 2;
        } else {
            out.push((Token::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// A path a `use` names, and the name it brings into scope (None for `*`
/// and `_`).
type Named = (Vec<String>, Option<String>);

/// The paths a `use` tree starting at `at` names, each with the name it
/// brings into scope (None for `*` and `_`); returns the index after it.
fn use_tree(t: &[(Token, usize)], mut at: usize, prefix: &[String]) -> (Vec<Named>, usize) {
    let mut path = prefix.to_vec();
    let mut out = Vec::new();
    loop {
        match t.get(at).map(|x| &x.0) {
            Some(Token::Path) => at += 1,
            Some(Token::Word(w)) if w == "as" => {
                let alias = match t.get(at + 1).map(|x| &x.0) {
                    Some(Token::Word(a)) if a != "_" => Some(a.clone()),
                    _ => None,
                };
                out.push((path, alias));
                return (out, at + 2);
            }
            Some(Token::Word(w)) => {
                path.push(w.clone());
                at += 1;
            }
            Some(Token::Punct('*')) => {
                out.push((path, None));
                return (out, at + 1);
            }
            Some(Token::Punct('{')) => {
                at += 1;
                loop {
                    match t.get(at).map(|x| &x.0) {
                        Some(Token::Punct('}')) | None => return (out, at + 1),
                        Some(Token::Punct(',')) => at += 1,
                        _ => {
                            let (inner, next) = use_tree(t, at, &path);
                            out.extend(inner);
                            at = next;
                        }
                    }
                }
            }
            _ => {
                // `self` in a group names the path before it.
                if path.last().is_some_and(|p| p == "self") && path.len() > prefix.len() {
                    path.pop();
                }
                let name = path.last().cloned();
                out.push((path, name));
                return (out, at);
            }
        }
    }
}

/// Every path `code` names, resolved to a path from the crate root (`a::b::c`).
/// A path is resolved from `crate`, `self`, any number of `super`, a child
/// module, or a name a `use` brought in; anything else (another crate, a
/// local item) is not the crate's.
fn paths_named(module: &str, code: &str, modules: &BTreeSet<String>) -> Vec<String> {
    let t = tokens(code);
    let here: Vec<String> = module.split("::").map(str::to_string).collect();
    let resolve =
        |segments: &[String], names: &BTreeMap<String, Vec<String>>| -> Option<Vec<String>> {
            let first = segments.first()?;
            let mut base: Vec<String> = match first.as_str() {
                "crate" => Vec::new(),
                "self" => here.clone(),
                "super" => {
                    let ups = segments.iter().take_while(|s| *s == "super").count();
                    let mut base = here.clone();
                    base.truncate(here.len().checked_sub(ups)?);
                    let mut out = base;
                    out.extend(segments[ups..].iter().cloned());
                    return Some(out);
                }
                name if modules.contains(&format!("{module}::{name}")) => {
                    let mut b = here.clone();
                    b.push(name.to_string());
                    b
                }
                name => names.get(name)?.clone(),
            };
            base.extend(segments[1..].iter().cloned());
            Some(base)
        };
    // First the names the `use` declarations bring in, anywhere in the file.
    let mut names: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut used = Vec::new();
    let mut in_use = vec![false; t.len()];
    for round in 0..2 {
        let mut at = 0;
        while at < t.len() {
            let starts_use = t[at].0 == Token::Word("use".into())
                && (at == 0 || !matches!(t[at - 1].0, Token::Path));
            if !starts_use {
                at += 1;
                continue;
            }
            let (trees, next) = use_tree(&t, at + 1, &[]);
            in_use[at..next.min(t.len())].iter_mut().for_each(|u| *u = true);
            for (path, name) in trees {
                if let Some(full) = resolve(&path, &names) {
                    if let Some(name) = name.filter(|n| n != "self" && n != "super") {
                        names.insert(name, full.clone());
                    }
                    if round == 1 {
                        used.push(full);
                    }
                }
            }
            at = next;
        }
    }
    // Then every other path in the code: a word followed by `::`, not
    // itself the tail of a longer path.
    let mut out: Vec<String> = used.iter().map(|p| p.join("::")).collect();
    let mut at = 0;
    while at < t.len() {
        let Token::Word(first) = &t[at].0 else {
            at += 1;
            continue;
        };
        let head = at == 0 || !matches!(t[at - 1].0, Token::Path);
        if !head || in_use[at] {
            at += 1;
            continue;
        }
        let mut segments = vec![first.clone()];
        let mut k = at + 1;
        while let (Some(Token::Path), Some(Token::Word(w))) =
            (t.get(k).map(|x| &x.0), t.get(k + 1).map(|x| &x.0))
        {
            segments.push(w.clone());
            k += 2;
        }
        // A single word counts only as a name a `use` brought in.
        if (segments.len() > 1 || names.contains_key(first))
            && let Some(full) = resolve(&segments, &names)
        {
            out.push(full.join("::"));
        }
        at = k;
    }
    out
}

/// A function's name and length.
pub struct Function {
    pub name: String,
    /// Lines from `fn` to its closing brace.
    pub lines: usize,
}

/// Every function with a body in `code` (methods and nested ones too).
pub fn functions(code: &str) -> Vec<Function> {
    let t = tokens(code);
    let mut out = Vec::new();
    for at in 0..t.len() {
        let (Token::Word(w), line) = &t[at] else { continue };
        let Some((Token::Word(name), _)) = t.get(at + 1) else { continue };
        if w != "fn" {
            continue;
        }
        // The body: the first `{` outside parentheses and angle brackets,
        // unless a `;` ends a declaration first.
        let mut k = at + 2;
        let mut depth = 0i32;
        let open = loop {
            match t.get(k).map(|x| &x.0) {
                None => break None,
                Some(Token::Punct('(' | '[')) => depth += 1,
                Some(Token::Punct(')' | ']')) => depth -= 1,
                Some(Token::Punct(';')) if depth == 0 => break None,
                Some(Token::Punct('{')) if depth == 0 => break Some(k),
                _ => {}
            }
            k += 1;
        };
        let Some(open) = open else { continue };
        let mut depth = 0;
        for (token, end_line) in &t[open..] {
            match token {
                Token::Punct('{') => depth += 1,
                Token::Punct('}') => {
                    depth -= 1;
                    if depth == 0 {
                        out.push(Function { name: name.clone(), lines: end_line - line + 1 });
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

#[test]
fn use_trees_and_paths_resolve() {
    let modules: BTreeSet<String> =
        ["a", "a::b", "a::b::c", "a::d", "e", "e::f"].iter().map(|s| s.to_string()).collect();
    let named = |m: &str, code: &str| {
        let mut p = paths_named(m, &blank(code), &modules);
        p.sort();
        p.dedup();
        p
    };
    assert_eq!(named("e", "use crate::a::{b::{self, c::X}, d};"), ["a::b", "a::b::c::X", "a::d"]);
    assert_eq!(named("a::b::c", "use super::super::d::Y;"), ["a::d::Y"]);
    assert_eq!(named("a::b", "use self::c::Z; fn f() { c::g() }"), ["a::b::c::Z", "a::b::c::g"]);
    assert_eq!(named("e", "fn f() { crate::a::b::c::g(); std::mem::drop(1); }"), ["a::b::c::g"]);
    assert_eq!(named("e::f", "use crate::a as top; fn f() { top::d::h() }"), ["a", "a::d::h"]);
    assert_eq!(named("e", "use crate::a::b; fn f() { b::c::k() }"), ["a::b", "a::b::c::k"]);
    assert_eq!(named("e", "use {crate::a::d};"), ["a::d"]);
    assert_eq!(
        named("e", "// crate::a::d\nlet s = \"crate::a::b\"; let c = '{';"),
        Vec::<String>::new()
    );
    assert_eq!(named("e", "let s = r#\"crate::a\"#; x::<crate::a::d::T>();"), ["a::d::T"]);
    let code = "fn a() {\n  1\n}\nfn b(x: fn(u8) -> u8) -> u8 {\n  if true { 1 } else { 2 }\n}\ntrait T { fn c(); }";
    let f = functions(&blank(code));
    assert_eq!(
        f.iter().map(|f| (f.name.as_str(), f.lines)).collect::<Vec<_>>(),
        [("a", 3), ("b", 3)]
    );
    let hidden = "fn a() {}\n#[cfg(test)]\nfn helper() {}\nfn b() { crate::x::y(); }\n#[cfg(test)]\nmod tests {\n    fn t() { crate::z(); }\n}\n#[cfg(test)]\nmod more;\n";
    let kept = without_test_items(hidden);
    assert!(kept.contains("crate::x::y") && !kept.contains("crate::z") && !kept.contains("more"));
}
