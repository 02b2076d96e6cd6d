//! The page's files, embedded in the binary with `include_bytes!` so the
//! inspector works offline: no CDN, no build step, vanilla HTML, CSS and
//! JavaScript (the sources are in `assets/`).

/// One embedded file.
#[derive(Debug, Clone, Copy)]
pub struct Asset {
    /// The `Content-Type` to send.
    pub content_type: &'static str,
    /// The file.
    pub bytes: &'static [u8],
}

/// Every file of the page, by path (`""` is the page itself).
const ASSETS: &[(&str, Asset)] = &[
    (
        "",
        Asset {
            content_type: "text/html; charset=utf-8",
            bytes: include_bytes!("../assets/index.html"),
        },
    ),
    (
        "index.html",
        Asset {
            content_type: "text/html; charset=utf-8",
            bytes: include_bytes!("../assets/index.html"),
        },
    ),
    (
        "style.css",
        Asset {
            content_type: "text/css; charset=utf-8",
            bytes: include_bytes!("../assets/style.css"),
        },
    ),
    (
        "app.js",
        Asset {
            content_type: "text/javascript; charset=utf-8",
            bytes: include_bytes!("../assets/app.js"),
        },
    ),
    (
        "chart.js",
        Asset {
            content_type: "text/javascript; charset=utf-8",
            bytes: include_bytes!("../assets/chart.js"),
        },
    ),
    (
        "explorer.js",
        Asset {
            content_type: "text/javascript; charset=utf-8",
            bytes: include_bytes!("../assets/explorer.js"),
        },
    ),
    (
        "editor.js",
        Asset {
            content_type: "text/javascript; charset=utf-8",
            bytes: include_bytes!("../assets/editor.js"),
        },
    ),
    (
        "favicon.svg",
        Asset {
            content_type: "image/svg+xml",
            bytes: include_bytes!("../assets/favicon.svg"),
        },
    ),
];

/// The file at `path` (decoded segments), if the page has one.
pub fn find(path: &[String]) -> Option<Asset> {
    let name = match path {
        [] => "",
        [one] => one.as_str(),
        _ => return None,
    };
    ASSETS.iter().find(|(n, _)| *n == name).map(|(_, a)| *a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_page_and_nothing_else() {
        assert!(find(&[]).unwrap().content_type.starts_with("text/html"));
        for file in [
            "app.js",
            "chart.js",
            "explorer.js",
            "editor.js",
            "style.css",
        ] {
            let asset = find(&[file.into()]).unwrap_or_else(|| panic!("{file}"));
            // The SVG namespace is a name, not a place anything is loaded from.
            let text = std::str::from_utf8(asset.bytes)
                .unwrap()
                .replace("\"http://www.w3.org/2000/svg\"", "");
            assert!(
                !text.contains("http://") && !text.contains("https://"),
                "{file}: nothing from elsewhere"
            );
        }
        let page = std::str::from_utf8(find(&[]).unwrap().bytes).unwrap();
        for script in ["chart.js", "explorer.js", "editor.js", "app.js"] {
            assert!(
                page.contains(&format!("<script src=\"{script}\">")),
                "{script}"
            );
        }
        assert!(find(&["nope.js".into()]).is_none());
        assert!(find(&["a".into(), "app.js".into()]).is_none());
        assert!(
            !page.contains("http://") && !page.contains("https://"),
            "no CDN"
        );
    }
}
