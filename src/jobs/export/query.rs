//! An export's query as configured: its `:name` placeholders bound to
//! settings (never spliced into the text).

/// Rewrites `:name` placeholders (outside string literals, quoted identifiers
/// and comments, and not `::` casts) to `current_setting('errand.p.name')`;
/// returns the query and the names in order of first use.
pub(super) fn bind_placeholders(query: &str) -> Result<(String, Vec<String>), String> {
    let chars: Vec<char> = query.chars().collect();
    let mut out = String::with_capacity(query.len() + 64);
    let mut names: Vec<String> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\'' | '"' => {
                // Copy a literal or quoted identifier whole; a doubled quote escapes.
                out.push(c);
                i += 1;
                while i < chars.len() {
                    out.push(chars[i]);
                    if chars[i] == c {
                        if chars.get(i + 1) == Some(&c) {
                            out.push(c);
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                if i >= chars.len() {
                    return Err(format!("unterminated {c} in the query"));
                }
                i += 1;
            }
            '-' if next == Some('-') => {
                while i < chars.len() && chars[i] != '\n' {
                    out.push(chars[i]);
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                let end = query_find(&chars, i + 2, "*/").ok_or("unterminated comment in the query")?;
                out.extend(&chars[i..end + 2]);
                i = end + 2;
            }
            ':' if next == Some(':') => {
                out.push_str("::");
                i += 2;
            }
            ':' if next.is_some_and(|n| n.is_ascii_lowercase() || n == '_') => {
                let start = i + 1;
                let mut end = start;
                while end < chars.len() && (chars[end].is_ascii_alphanumeric() || chars[end] == '_') {
                    end += 1;
                }
                let name: String = chars[start..end].iter().collect();
                out.push_str(&format!("current_setting('errand.p.{name}')"));
                if !names.contains(&name) {
                    names.push(name);
                }
                i = end;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok((out, names))
}

/// Whether a query's rows are held to the job's tenant: by `:tenant` in
/// it, or by the source's row-level security, given the tenant in a setting.
pub(super) fn scoped_to_tenant(placeholders: &[String], tenant_setting: Option<&str>) -> Result<(), String> {
    match (placeholders.iter().any(|n| n == "tenant"), tenant_setting) {
        (true, _) | (false, Some(_)) => Ok(()),
        (false, None) => Err("the query must restrict rows to the job's tenant with :tenant (or the source's \
                              row-level security, with tenant_setting)"
            .into()),
    }
}

/// Whether `name` can name a setting of the source's own (`app.current_tenant`).
pub(super) fn is_custom_setting(name: &str) -> bool {
    let part = |p: &str| {
        p.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
            && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    matches!(name.split_once('.'), Some((a, b)) if part(a) && part(b))
}

fn query_find(chars: &[char], from: usize, needle: &str) -> Option<usize> {
    let needle: Vec<char> = needle.chars().collect();
    (from..chars.len().saturating_sub(needle.len() - 1)).find(|&i| chars[i..i + needle.len()] == needle[..])
}

/// `name` as an SQL identifier, quoted.
pub(super) fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn placeholders_become_settings_and_casts_literals_and_comments_stay() {
        let (sql, names) = bind_placeholders(
            "SELECT ':not' AS \"a:b\", x::int FROM t -- :comment\nWHERE tenant_id = :tenant AND d >= :from::date /* :c */",
        )
        .unwrap();
        assert_eq!(
            sql,
            "SELECT ':not' AS \"a:b\", x::int FROM t -- :comment\nWHERE tenant_id = current_setting('errand.p.tenant') \
             AND d >= current_setting('errand.p.from')::date /* :c */"
        );
        assert_eq!(names, ["tenant", "from"]);
    }

    #[test]
    fn a_query_without_tenant_scope_is_refused() {
        let (_, names) = bind_placeholders("SELECT * FROM sales WHERE sold_at >= :from::date").unwrap();
        assert!(scoped_to_tenant(&names, None).is_err());
        assert!(scoped_to_tenant(&names, Some("app.current_tenant")).is_ok(), "row-level security holds it");
        assert!(bind_placeholders("SELECT 'unterminated FROM t WHERE :tenant = 1").is_err());
        assert!(is_custom_setting("app.current_tenant"));
        for bad in ["current_tenant", "app.current-tenant", "App.x", "a.b.c", "app.", ".x"] {
            assert!(!is_custom_setting(bad), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn text_without_colons_is_unchanged(body in "[a-zA-Z0-9 ,()*=<>_.\n]{0,200}") {
            let query = format!("{body} :tenant");
            let (sql, names) = bind_placeholders(&query).unwrap();
            prop_assert_eq!(sql, format!("{body} current_setting('errand.p.tenant')"));
            prop_assert_eq!(names, vec!["tenant".to_owned()]);
        }
    }
}
