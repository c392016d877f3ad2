//! The cells of a generated Markdown table, written ([`cell`]) and read
//! back ([`cells`], [`link_text`]) the same way by the compiler and the
//! merge driver.

/// One table cell: `|` escaped, and `<` (so a viewer shows `Vec<String>`
/// instead of taking `<String>` for a tag), newlines folded, `—` when empty.
pub fn cell(text: &str) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.is_empty() {
        return "—".into();
    }
    folded.replace('|', "\\|").replace('<', "\\<")
}

/// `cell` cut to at most `max` bytes: a longer one ends in `…` (never in
/// half an escape), so that a row of a bounded table has a known size.
pub fn clipped(cell: String, max: usize) -> String {
    if cell.len() <= max {
        return cell;
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !cell.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = cell[..end].to_string();
    // An odd run of backslashes at the end would escape the `…`.
    let slashes = out.chars().rev().take_while(|&c| c == '\\').count();
    if slashes % 2 == 1 {
        out.pop();
    }
    out.push('…');
    out
}

/// The cells of a table row, unescaped.
pub fn cells(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|').trim_end_matches('|');
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // What `cell` escapes: `\|` and `\<`.
            '\\' if matches!(chars.peek(), Some('|' | '<')) => {
                out.last_mut().expect("a cell").extend(chars.next());
            }
            '|' => out.push(String::new()),
            _ => out.last_mut().expect("a cell").push(c),
        }
    }
    out.iter().map(|c| c.trim().to_string()).collect()
}

/// The text of a `[text](target)` link cell, or the cell itself.
pub fn link_text(cell: &str) -> &str {
    cell.strip_prefix('[').and_then(|c| c.split_once("](")).map_or(cell, |(t, _)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_read_back_what_cell_wrote() {
        assert_eq!(cells("| a \\| b | [x](y) |"), ["a | b", "[x](y)"]);
        for text in ["Vec<String> | a < b", "plain", "\\ back"] {
            let row = format!("| {} |", cell(text));
            assert_eq!(cells(&row), [text], "{row}");
        }
        assert_eq!(link_text("[x.md](x.md)"), "x.md");
    }

    #[test]
    fn a_clipped_cell_fits_and_reads_back_as_one_cell() {
        for text in ["a|".repeat(80), "部署".repeat(60), "x\\|".repeat(50), "short".into()] {
            let c = clipped(cell(&text), 40);
            assert!(c.len() <= 40, "{c}");
            assert_eq!(cells(&format!("| {c} | next |")).len(), 2, "{c}");
        }
        assert_eq!(clipped("short".into(), 40), "short");
        assert!(clipped("a".repeat(50), 40).ends_with('…'));
    }
}
