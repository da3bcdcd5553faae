//! The status page: one self-contained HTML document (inline CSS, JS and SVG; it fetches
//! nothing from any network) with the site's [snapshot](super::snapshot) embedded as JSON,
//! rendered by the page's own script. Served live by [`super::serve`], it polls
//! `/status.json` and renders again.

use serde_json::Value;

/// The page around its data: `page.html` with `@SNAPSHOT@` and `@LIVE@` to fill in.
const TEMPLATE: &str = include_str!("page.html");

/// JSON text that is safe inside a `<script>` element: `<`, `>` and `&` (which only occur
/// inside JSON strings) become `\u003c`, `\u003e` and `\u0026`, so no `</script>` or `<!--`
/// in a name can end the element; U+2028 and U+2029 are escaped as well.
pub fn script_json(value: &Value) -> String {
    let mut out = String::new();
    for c in value.to_string().chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The page with `snapshot` embedded; `live` makes it poll `/status.json` every few seconds.
pub fn render(snapshot: &Value, live: bool) -> String {
    TEMPLATE
        .replacen("@LIVE@", if live { "true" } else { "false" }, 1)
        .replacen("@SNAPSHOT@", &script_json(snapshot), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cannot_end_the_script_element() {
        let v = serde_json::json!({"host": "</script><script>alert('x\"')</script><!--"});
        let page = render(&v, false);
        let body = page.split("id=\"snapshot\">").nth(1).unwrap();
        let data = body.split("</script>").next().unwrap();
        assert!(!data.contains('<') && !data.contains('>'), "{data}");
        let back: Value = serde_json::from_str(data).unwrap();
        assert_eq!(back, v);
    }
}
