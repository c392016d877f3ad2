//! Properties over arbitrary input: parsing never panics, an accepted path
//! never leaves its root, and a rewrite never changes the body.

use mem::frontmatter::Document;
use mem::relpath::RelPath;
use proptest::prelude::*;

proptest! {
    #[test]
    fn any_text_parses_or_is_reported(text in "(---|\r|\n|\u{feff}|[a-z: \\[\\]{}\"'#-]|部署){0,60}") {
        if let Ok(doc) = Document::parse(&text) {
            // A document we can read renders to one that reads the same.
            let again = Document::parse(&doc.render()).unwrap();
            prop_assert_eq!(&again.body, &doc.body);
            prop_assert_eq!(&again.meta, &doc.meta);
        }
    }

    #[test]
    fn setting_a_key_keeps_the_body(body in "(---|\r\n|\n|[a-z #]|部署){0,40}", value in "[a-z部署 ]{0,10}") {
        let mut doc = Document::parse(&format!("---\nkind: fact\n---\n{body}")).unwrap();
        doc.set("summary", value.as_str());
        let again = Document::parse(&doc.render()).unwrap();
        prop_assert_eq!(again.get_str("kind"), Some("fact"));
        prop_assert_eq!(again.body, body);
    }

    #[test]
    fn accepted_paths_stay_inside(arg in "[a-z./\\\\_-]{0,12}") {
        if let Ok(p) = RelPath::parse(&arg) {
            let joined = p.under(std::path::Path::new("/root"));
            prop_assert!(joined.starts_with("/root"));
            prop_assert!(!p.category.starts_with('.') && !p.slug.starts_with('.'));
            prop_assert!(p.file().split('/').all(|part| part != ".." && part != "." && !part.is_empty()));
            prop_assert_eq!(p.file().matches('/').count(), 1);
        }
    }
}
