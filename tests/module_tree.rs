//! The import graph of `src/` is a tree of layers: at every level of the
//! module tree, the children of one module depend on each other without a
//! circle (`store::finish` may use `store::queue`, or the other way round,
//! never both; `http` may use `actors`, never the reverse). A module's own
//! file (its `mod.rs`, or `lib.rs` for the crate) is its facade: it may use
//! its children, and they may use what it defines itself.
//!
//! This reads the source, not the compiler's view, so it is a close
//! approximation: `use` trees and inline `crate::`/`super::` paths, with
//! re-exports followed to the module that defines the item, and
//! `#[cfg(test)]` modules left out. It needs no tool beyond the test itself,
//! so CI runs it with the rest.

// Tests unwrap: a panic is the failure message (Cargo.toml denies it elsewhere).
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type ModPath = Vec<String>;

struct Module {
    file: PathBuf,
    /// The source without comments and test modules.
    code: String,
}

/// At each level (the parent module), the edges between its children, each
/// with one reference as evidence.
type Levels = BTreeMap<ModPath, BTreeMap<(String, String), String>>;

#[test]
fn no_module_depends_on_a_sibling_that_depends_back() {
    let levels = sibling_edges(&read_modules(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))));
    let mut circles = Vec::new();
    for (level, edges) in &levels {
        for component in strongly_connected(edges) {
            let inside: Vec<&str> = edges
                .iter()
                .filter(|((a, b), _)| component.contains(a) && component.contains(b))
                .map(|(_, e)| e.as_str())
                .collect();
            circles.push(format!("in crate::{}: {:?}\n    {}", level.join("::"), component, inside.join("\n    ")));
        }
    }
    assert!(circles.is_empty(), "modules that depend on each other:\n{}", circles.join("\n"));
}

#[test]
fn the_checker_sees_a_circle_between_siblings_and_not_a_facade_using_its_children() {
    let modules: BTreeMap<ModPath, Module> = [
        (vec![], "pub use a::A; fn f() -> b::B { todo!() }"),
        (vec!["a"], "use crate::b::B; pub struct A;"),
        (vec!["b"], "pub struct B; fn f() -> crate::a::A { todo!() }"),
        (vec!["c"], "use super::A; pub struct C;"),
    ]
    .into_iter()
    .map(|(path, code)| {
        let path = path.into_iter().map(str::to_owned).collect();
        (path, Module { file: PathBuf::new(), code: code.to_owned() })
    })
    .collect();
    let levels = sibling_edges(&modules);
    assert_eq!(strongly_connected(&levels[&vec![]]), vec![BTreeSet::from(["a".to_owned(), "b".to_owned()])]);
    assert!(levels[&vec![]].contains_key(&("c".to_owned(), "a".to_owned())), "followed through the re-export");
}

/// Every edge between sibling modules that the code's references make.
fn sibling_edges(modules: &BTreeMap<ModPath, Module>) -> Levels {
    let reexports = reexports(modules);
    let mut levels = Levels::new();
    for (path, module) in modules {
        for reference in references(&module.code) {
            let Some(target) = resolve(path, &reference.segments, modules, &reexports) else { continue };
            if reference.reexport && target.starts_with(path) {
                continue; // a facade re-exporting its own child
            }
            let common = path.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common >= path.len() || common >= target.len() {
                continue; // within one module, or to or from its own facade
            }
            let evidence = format!("{} uses {}", module.file.display(), reference.segments.join("::"));
            levels
                .entry(path[..common].to_vec())
                .or_default()
                .entry((path[common].clone(), target[common].clone()))
                .or_insert(evidence);
        }
    }
    levels
}

/// Every module file under `src` (the library only: `main.rs` and `bin/` are
/// its users), by module path.
fn read_modules(src: &Path) -> BTreeMap<ModPath, Module> {
    let mut modules = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src is readable") {
            let file = entry.expect("a directory entry").path();
            if file.is_dir() {
                if file.file_name().is_some_and(|n| n != "bin") {
                    dirs.push(file);
                }
                continue;
            }
            if file.extension().is_none_or(|e| e != "rs") || file == src.join("main.rs") {
                continue;
            }
            let relative = file.strip_prefix(src).expect("under src").with_extension("");
            let mut path: ModPath = relative.iter().map(|s| s.to_string_lossy().into_owned()).collect();
            if path.last().is_some_and(|last| last == "mod" || last == "lib") {
                path.pop();
            }
            let code = without_test_modules(&without_comments(&std::fs::read_to_string(&file).expect("readable")));
            modules.insert(path, Module { file: file.strip_prefix(src.parent().unwrap()).unwrap().to_owned(), code });
        }
    }
    modules
}

fn without_comments(source: &str) -> String {
    source.lines().filter(|line| !line.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// Drops `#[cfg(test)] mod … { … }` blocks (their `super` is the file itself,
/// and tests may reach anywhere).
fn without_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        if !trimmed.starts_with("mod ") || !trimmed.split(';').next().is_some_and(|head| head.contains('{')) {
            rest = after;
            continue;
        }
        let open = after.find('{').expect("checked above");
        rest = &after[matching_brace(&after[open..]).map_or(after.len(), |end| open + end + 1)..];
    }
    out.push_str(rest);
    out
}

/// The index of the brace closing the one `code` starts with, skipping
/// string and character literals.
fn matching_brace(code: &str) -> Option<usize> {
    let bytes = code.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let raw_hashes = code[..i].bytes().rev().take_while(|b| *b == b'#').count();
                let raw = i > raw_hashes && bytes[i - raw_hashes - 1] == b'r';
                i += 1;
                if raw {
                    let close = format!("\"{}", "#".repeat(raw_hashes));
                    i += code[i..].find(&close)? + close.len() - 1;
                } else {
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                }
            }
            b'\'' if i + 2 < bytes.len() && bytes[i + 2] == b'\'' => i += 2,
            b'\'' if i + 3 < bytes.len() && bytes[i + 1] == b'\\' && bytes[i + 3] == b'\'' => i += 3,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

struct Reference {
    segments: Vec<String>,
    /// From a `pub use`: a re-export.
    reexport: bool,
}

/// Every path the code names that starts at `crate`, `super` or `self`:
/// those of `use` declarations (trees expanded) and those written inline.
fn references(code: &str) -> Vec<Reference> {
    let mut found = Vec::new();
    let mut rest = code;
    let mut inline = String::with_capacity(code.len());
    while let Some((before, declaration, after, public)) = next_use(rest) {
        inline.push_str(before);
        for (path, _alias) in expand_use_tree(declaration) {
            if matches!(path.first().map(String::as_str), Some("crate" | "super" | "self")) {
                found.push(Reference { segments: path, reexport: public });
            }
        }
        rest = after;
    }
    inline.push_str(rest);
    let bytes = inline.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word =
            i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':');
        let head = [&b"crate::"[..], b"super::"].into_iter().find(|h| bytes[i..].starts_with(h));
        if let (true, Some(_)) = (starts_word, head) {
            let end = bytes[i..]
                .iter()
                .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_' || *c == b':'))
                .map_or(bytes.len(), |n| i + n);
            let segments: Vec<String> =
                inline[i..end].split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect();
            found.push(Reference { segments, reexport: false });
            i = end;
        } else {
            i += 1;
        }
    }
    found
}

/// The next `use …;` in `code`: the text before it, the tree, the text after,
/// and whether it is public (`pub`, `pub(crate)`, `pub(super)`).
fn next_use(code: &str) -> Option<(&str, &str, &str, bool)> {
    let mut from = 0;
    loop {
        let at = from + code[from..].find("use ")?;
        let at_word = at == 0 || code[..at].ends_with(|c: char| c.is_whitespace() || c == ';' || c == '{' || c == '}');
        let line_start = code[..at].rfind('\n').map_or(0, |n| n + 1);
        let prefix = code[line_start..at].trim();
        if !at_word || !(prefix.is_empty() || prefix.starts_with("pub")) {
            from = at + 4;
            continue;
        }
        let end = at + code[at..].find(';')?;
        return Some((&code[..line_start], &code[at + 4..end], &code[end + 1..], !prefix.is_empty()));
    }
}

/// `a::{b, c::{d as e, self}}` → `a::b`, `a::c::d` (alias `e`), `a::c`.
fn expand_use_tree(tree: &str) -> Vec<(Vec<String>, Option<String>)> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace() || *c == ' ').collect();
    let mut out = Vec::new();
    expand_into(&[], tree.trim(), &mut out);
    out
}

fn expand_into(prefix: &[String], tree: &str, out: &mut Vec<(Vec<String>, Option<String>)>) {
    let tree = tree.trim();
    if tree.is_empty() {
        return;
    }
    if let Some(open) = tree.find('{') {
        let mut base = prefix.to_vec();
        base.extend(tree[..open].split("::").map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned));
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_into(&base, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand_into(&base, &inner[start..], out);
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((path, alias)) => (path, Some(alias.trim().to_owned())),
        None => (tree, None),
    };
    let mut full = prefix.to_vec();
    full.extend(path.split("::").map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned));
    if full.last().is_some_and(|last| last == "self") {
        full.pop();
    }
    if full.last().is_some_and(|last| last == "*") {
        full.pop();
    }
    out.push((full, alias));
}

/// For each module, the names it re-exports and the paths they stand for.
fn reexports(modules: &BTreeMap<ModPath, Module>) -> BTreeMap<ModPath, BTreeMap<String, Vec<String>>> {
    let mut all = BTreeMap::new();
    for (path, module) in modules {
        let mut names = BTreeMap::new();
        let mut rest = module.code.as_str();
        while let Some((_, declaration, after, public)) = next_use(rest) {
            if public {
                for (target, alias) in expand_use_tree(declaration) {
                    if let Some(name) = alias.or_else(|| target.last().cloned()) {
                        names.insert(name, target);
                    }
                }
            }
            rest = after;
        }
        all.insert(path.clone(), names);
    }
    all
}

/// The module defining what `segments` names, seen from module `from`.
fn resolve(
    from: &ModPath,
    segments: &[String],
    modules: &BTreeMap<ModPath, Module>,
    reexports: &BTreeMap<ModPath, BTreeMap<String, Vec<String>>>,
) -> Option<ModPath> {
    resolve_within(from, segments, modules, reexports, 8)
}

fn resolve_within(
    from: &ModPath,
    segments: &[String],
    modules: &BTreeMap<ModPath, Module>,
    reexports: &BTreeMap<ModPath, BTreeMap<String, Vec<String>>>,
    depth: u8,
) -> Option<ModPath> {
    let mut current = from.clone();
    let mut rest = segments;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            current.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                current.pop()?;
                rest = &rest[1..];
            }
        }
        _ => {
            // A path relative to `from` (inside a re-export): a child of it, or nothing of ours.
            let mut child = from.clone();
            child.push(rest.first()?.clone());
            if !modules.contains_key(&child) {
                return None;
            }
        }
    }
    while let Some(next) = rest.first() {
        let mut child = current.clone();
        child.push(next.clone());
        if modules.contains_key(&child) {
            current = child;
            rest = &rest[1..];
            continue;
        }
        if depth > 0
            && let Some(target) = reexports.get(&current).and_then(|names| names.get(next))
        {
            let mut followed = target.clone();
            followed.extend(rest[1..].iter().cloned());
            return resolve_within(&current, &followed, modules, reexports, depth - 1).or(Some(current));
        }
        break;
    }
    Some(current)
}

/// The circles of a directed graph (Tarjan's strongly connected components
/// of more than one node).
fn strongly_connected(edges: &BTreeMap<(String, String), String>) -> Vec<BTreeSet<String>> {
    let mut nodes: BTreeSet<&String> = BTreeSet::new();
    for (a, b) in edges.keys() {
        nodes.insert(a);
        nodes.insert(b);
    }
    let nodes: Vec<&String> = nodes.into_iter().collect();
    let index_of = |name: &String| nodes.iter().position(|n| *n == name).expect("a node");
    let successors: Vec<Vec<usize>> =
        nodes.iter().map(|node| edges.keys().filter(|(a, _)| a == *node).map(|(_, b)| index_of(b)).collect()).collect();
    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        components: Vec<Vec<usize>>,
    }
    fn visit(v: usize, successors: &[Vec<usize>], s: &mut State) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &successors[v] {
            match s.index[w] {
                None => {
                    visit(w, successors, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(index) if s.on_stack[w] => s.low[v] = s.low[v].min(index),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.components.push(component);
        }
    }
    let n = nodes.len();
    let mut state = State {
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        components: Vec::new(),
    };
    for v in 0..n {
        if state.index[v].is_none() {
            visit(v, &successors, &mut state);
        }
    }
    state
        .components
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| c.into_iter().map(|i| nodes[i].clone()).collect())
        .collect()
}

/// The layout rules that keep `src/` a house a newcomer finds their way in:
/// no folder of more than 12 entries, features as folders rather than name
/// prefixes (no three siblings named `<prefix>_…`), and no function longer
/// than 80 lines.
#[test]
fn folders_stay_small_and_features_are_folders() {
    let mut problems = Vec::new();
    visit_folders(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")), &mut problems);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn visit_folders(dir: &Path, problems: &mut Vec<String>) {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            visit_folders(&path, problems);
        } else if path.extension().is_some_and(|e| e == "rs") {
            problems.extend(long_functions(&path));
        }
        names.push(path.file_stem().unwrap().to_string_lossy().into_owned());
    }
    if names.len() > 12 {
        problems.push(format!("{}: {} entries (at most 12)", dir.display(), names.len()));
    }
    let mut prefixes: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for name in names.iter().filter(|n| n.contains('_')) {
        prefixes.entry(name.split('_').next().unwrap()).or_default().push(name);
    }
    for (prefix, siblings) in prefixes.iter().filter(|(_, s)| s.len() >= 3) {
        problems.push(format!("{}: {siblings:?} share `{prefix}_` (a folder?)", dir.display()));
    }
}

/// Functions over 80 lines: from a line opening `fn` to the line that
/// closes it at the same indentation.
fn long_functions(file: &Path) -> Vec<String> {
    let source = std::fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = source.lines().collect();
    let mut long = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let indent = &line[..line.len() - code.len()];
        let opens = ["fn ", "pub fn ", "async fn ", "pub async fn ", "pub(crate) fn ", "pub(crate) async fn "];
        let opens_fn =
            opens.iter().any(|o| code.starts_with(o)) || (code.starts_with("pub(in ") && code.contains(" fn "));
        if !opens_fn {
            continue;
        }
        if code.ends_with(';') || code.ends_with('}') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = lines[start..].iter().position(|l| *l == close)
            && end + 1 > 80
        {
            long.push(format!("{}:{}: a function of {} lines (at most 80)", file.display(), start + 1, end + 1));
        }
    }
    long
}
