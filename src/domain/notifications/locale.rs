//! A person's language: one of the catalogues errand ships, chosen from
//! what they ask for (their token's locale claim, else their browser's
//! `Accept-Language`, else `[i18n] default_locale`). It is recorded with each
//! job, batch and schedule when it is made, and copied onto its
//! notifications, so that the feed, the email, a digest and a push say the
//! same thing in the same language whenever they are read or sent.

use std::fmt;

use fluent_langneg::{NegotiationStrategy, negotiate_languages};
use unic_langid::LanguageIdentifier;

/// A catalogue errand ships: its language tag, the glibc locale whose month
/// names and number separators its dates and sizes use, and its Fluent
/// files (`templates/locales/{tag}/`).
pub(super) struct Shipped {
    pub tag: &'static str,
    pub region_locale: pure_rust_locales::Locale,
    pub sources: [&'static str; 2],
}

/// The catalogues, English first: what any other lacks is said in English
/// (and logged). Adding one is a folder `templates/locales/{tag}/` with both
/// files and a line here; the catalogue tests then check it is complete.
pub(super) const SHIPPED: [Shipped; 2] = [
    Shipped {
        tag: "en",
        region_locale: pure_rust_locales::Locale::en_GB,
        sources: [
            include_str!("../../../templates/locales/en/errand.ftl"),
            include_str!("../../../templates/locales/en/elements.ftl"),
        ],
    },
    Shipped {
        tag: "fr",
        region_locale: pure_rust_locales::Locale::fr_FR,
        sources: [
            include_str!("../../../templates/locales/fr/errand.ftl"),
            include_str!("../../../templates/locales/fr/elements.ftl"),
        ],
    },
];

/// [`SHIPPED`]'s tags, parsed once: every authenticated request negotiates
/// against them.
static SHIPPED_IDS: std::sync::LazyLock<Vec<LanguageIdentifier>> = std::sync::LazyLock::new(|| {
    SHIPPED.iter().map(|s| s.tag.parse().expect("shipped tags are language tags")).collect()
});

/// One of the shipped catalogues (an index into [`SHIPPED`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Locale(u8);

impl Locale {
    /// English: the catalogue every other is checked against.
    pub const ENGLISH: Self = Self(0);

    /// Every shipped locale.
    pub fn all() -> impl Iterator<Item = Self> {
        (0..SHIPPED.len()).map(|i| Self(i as u8))
    }

    /// The shipped locale whose tag is exactly `tag` (as recorded).
    pub fn parse(tag: &str) -> Option<Self> {
        SHIPPED.iter().position(|s| s.tag == tag).map(|i| Self(i as u8))
    }

    /// The best shipped locale for a person who asks for `wanted`, in their
    /// order of preference (`fr-CA` is served `fr`); none when no catalogue
    /// is in their languages.
    pub fn negotiate<'a>(wanted: impl IntoIterator<Item = &'a str>) -> Option<Self> {
        let wanted: Vec<LanguageIdentifier> = wanted.into_iter().filter_map(|tag| tag.parse().ok()).collect();
        Self::best_of(&wanted)
    }

    /// The best shipped locale for an `Accept-Language` header, by its
    /// weights (RFC 9110 §12.5.4).
    pub fn from_accept_language(header: &str) -> Option<Self> {
        // fluent-langneg's own parser ignores the weights; browsers send them.
        let mut weighted: Vec<(u16, LanguageIdentifier)> = header
            .split(',')
            .filter_map(|item| {
                let mut parts = item.split(';').map(str::trim);
                let tag = parts.next()?.parse().ok()?;
                let q = parts.find_map(|p| p.strip_prefix("q=")).map_or(Some(1.0), |q| q.parse::<f32>().ok())?;
                // q=0 is "not this one"; weights have three decimals at most.
                (q > 0.0).then(|| ((q.min(1.0) * 1000.0) as u16, tag))
            })
            .collect();
        weighted.sort_by_key(|(q, _)| std::cmp::Reverse(*q));
        Self::best_of(&weighted.into_iter().map(|(_, tag)| tag).collect::<Vec<_>>())
    }

    fn best_of(wanted: &[LanguageIdentifier]) -> Option<Self> {
        let shipped = &*SHIPPED_IDS;
        let chosen = negotiate_languages(wanted, shipped, None, NegotiationStrategy::Lookup);
        let chosen = chosen.first()?;
        shipped.iter().position(|s| s == *chosen).map(|i| Self(i as u8))
    }

    /// Its tag, as recorded: `en`, `fr`.
    pub fn as_str(self) -> &'static str {
        self.shipped().tag
    }

    pub(super) fn index(self) -> usize {
        usize::from(self.0)
    }

    pub(super) fn shipped(self) -> &'static Shipped {
        &SHIPPED[self.index()]
    }
}

impl fmt::Display for Locale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Locale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Locale({})", self.as_str())
    }
}

impl serde::Serialize for Locale {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn people_get_the_nearest_shipped_language_or_none() {
        let fr = Locale::parse("fr").unwrap();
        assert_eq!(Locale::negotiate(["fr-CA"]), Some(fr));
        assert_eq!(Locale::negotiate(["de", "fr"]), Some(fr));
        assert_eq!(Locale::negotiate(["en-US", "fr"]), Some(Locale::ENGLISH));
        assert_eq!(Locale::negotiate(["de", "ja"]), None);
        assert_eq!(Locale::negotiate(["not a tag!"]), None);
        assert_eq!(Locale::from_accept_language("de-CH, fr;q=0.9, en;q=0.8"), Some(fr));
        assert_eq!(Locale::from_accept_language("en;q=0.5, fr-FR;q=0.9"), Some(fr));
        assert_eq!(Locale::from_accept_language("*"), None);
        assert_eq!(Locale::from_accept_language(""), None);
        assert_eq!(Locale::from_accept_language("fr;q=0, en;q=0.1"), Some(Locale::ENGLISH));
        assert_eq!(Locale::parse("fr-CA"), None, "a recorded tag is a shipped one, exactly");
    }

    #[test]
    fn every_locale_reads_back_from_its_tag() {
        for locale in Locale::all() {
            assert_eq!(Locale::parse(locale.as_str()), Some(locale));
        }
    }
}
