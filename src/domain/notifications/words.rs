//! What errand says to people, in their language: messages from the Fluent
//! catalogues in `templates/locales/{tag}/` (built into the binary; plural
//! rules are CLDR's, through fluent-bundle), and dates, counts and sizes as
//! the locale writes them (month names and separators from glibc's locale
//! data, through chrono and pure-rust-locales). A message a catalogue lacks
//! is said in English and logged; the catalogue tests keep that from
//! happening to a shipped one.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use fluent_syntax::ast;

use super::locale::{Locale, SHIPPED, Shipped};

type Bundle = FluentBundle<FluentResource>;

/// Each shipped locale's bundle, in [`SHIPPED`]'s order.
static BUNDLES: LazyLock<Vec<Bundle>> = LazyLock::new(|| SHIPPED.iter().map(bundle_of).collect());

/// Each shipped locale's elements' messages, English's where it lacks one
/// (see [`Locale::element_messages`]); merged once, not per request.
static ELEMENTS: LazyLock<Vec<BTreeMap<String, String>>> = LazyLock::new(|| {
    let english = simple_messages(SHIPPED[0].sources[1]);
    SHIPPED
        .iter()
        .map(|shipped| {
            let mut messages = english.clone();
            messages.extend(simple_messages(shipped.sources[1]));
            messages
        })
        .collect()
});

fn bundle_of(shipped: &Shipped) -> Bundle {
    let language = shipped.tag.parse().expect("shipped tags are language tags");
    let mut bundle = FluentBundle::new_concurrent(vec![language]);
    // Unicode isolation marks around each value would show in subjects and text mail.
    bundle.set_use_isolating(false);
    for source in shipped.sources {
        let resource = FluentResource::try_new(source.to_owned()).unwrap_or_else(|(resource, errors)| {
            tracing::error!(locale = shipped.tag, ?errors, "a catalogue does not parse whole");
            resource
        });
        if let Err(errors) = bundle.add_resource(resource) {
            tracing::error!(locale = shipped.tag, ?errors, "a catalogue repeats a message");
        }
    }
    bundle
}

/// A value given to a message: text, or a number (which plural rules read).
#[derive(Debug, Clone)]
pub enum Arg<'a> {
    Text(Cow<'a, str>),
    Number(f64),
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(text: &'a str) -> Self {
        Self::Text(Cow::Borrowed(text))
    }
}

impl From<String> for Arg<'_> {
    fn from(text: String) -> Self {
        Self::Text(Cow::Owned(text))
    }
}

impl From<u64> for Arg<'_> {
    fn from(n: u64) -> Self {
        Self::Number(n as f64)
    }
}

impl From<i64> for Arg<'_> {
    fn from(n: i64) -> Self {
        Self::Number(n as f64)
    }
}

/// Why a message could not be said as its catalogue has it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unsaid {
    #[error("{locale} has no message {id}")]
    Missing { locale: &'static str, id: String },
    #[error("{locale}'s {id}: {errors}")]
    Broken { locale: &'static str, id: String, errors: String },
}

impl Locale {
    /// Message `id` with `args`, in this language (in English where this
    /// catalogue lacks it; its id where English does too).
    pub fn say(self, id: &str, args: &[(&str, Arg<'_>)]) -> String {
        match self.try_say(id, args) {
            Ok(said) => said,
            Err(unsaid) => {
                tracing::warn!(error = %unsaid, "a message said in English");
                Locale::ENGLISH.try_say(id, args).unwrap_or_else(|_| id.to_owned())
            }
        }
    }

    /// Message `id` as this catalogue has it, or why not: what the catalogue
    /// tests and the template tests hold every message to.
    pub fn try_say(self, id: &str, args: &[(&str, Arg<'_>)]) -> Result<String, Unsaid> {
        let bundle = &BUNDLES[self.index()];
        let locale = self.as_str();
        let pattern = bundle.get_message(id).and_then(|message| message.value());
        let pattern = pattern.ok_or_else(|| Unsaid::Missing { locale, id: id.to_owned() })?;
        let mut fluent_args = FluentArgs::with_capacity(args.len());
        for (name, value) in args {
            let value = match value {
                Arg::Text(text) => FluentValue::from(text.as_ref()),
                Arg::Number(n) => FluentValue::from(*n),
            };
            fluent_args.set(*name, value);
        }
        let mut errors = Vec::new();
        let said = bundle.format_pattern(pattern, Some(&fluent_args), &mut errors).into_owned();
        match errors.is_empty() {
            true => Ok(said),
            false => Err(Unsaid::Broken { locale, id: id.to_owned(), errors: format!("{errors:?}") }),
        }
    }

    /// A moment as this language writes it in `zone`: `5 December 2026,
    /// 08:00 CET`, `5 décembre 2026, 08:00 CET` (its `format-date-time`).
    pub fn date_time(self, at: DateTime<Utc>, zone: chrono_tz::Tz) -> String {
        self.strftime("format-date-time", at, zone)
    }

    /// A day as this language writes it in `zone` (its `format-date`).
    pub fn date(self, at: DateTime<Utc>, zone: chrono_tz::Tz) -> String {
        self.strftime("format-date", at, zone)
    }

    fn strftime(self, id: &str, at: DateTime<Utc>, zone: chrono_tz::Tz) -> String {
        let pattern = self.say(id, &[]);
        let mut written = String::new();
        // A pattern chrono cannot read is an error of Display, which
        // `to_string` would turn into a panic: the moment as RFC 3339 instead.
        match write!(written, "{}", at.with_timezone(&zone).format_localized(&pattern, self.shipped().region_locale)) {
            Ok(()) => written,
            Err(_) => at.with_timezone(&zone).to_rfc3339(),
        }
    }

    /// `1234567` as this language writes it: `1,234,567`, `1 234 567`.
    pub fn count(self, n: u64) -> String {
        let separator = pure_rust_locales::locale_match!(self.shipped().region_locale => LC_NUMERIC::THOUSANDS_SEP);
        let digits = n.to_string();
        let mut out = String::with_capacity(digits.len() * 2);
        for (i, digit) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push_str(separator);
            }
            out.push(digit);
        }
        out
    }

    /// A size as people read it, in powers of 1000 as file managers show
    /// them: `812 bytes`, `1.2 MB`, `1,2 Mo`.
    pub fn size(self, bytes: u64) -> String {
        const UNITS: [&str; 4] = ["size-kb", "size-mb", "size-gb", "size-tb"];
        if bytes < 1000 {
            return self.say("size-bytes", &[("count", bytes.into()), ("n", self.count(bytes).into())]);
        }
        let mut size = bytes as f64 / 1000.0;
        let mut unit = 0;
        // 999.96 kB would print as "1000.0 kB": move up a unit first.
        while size >= 999.95 && unit < UNITS.len() - 1 {
            size /= 1000.0;
            unit += 1;
        }
        let point = pure_rust_locales::locale_match!(self.shipped().region_locale => LC_NUMERIC::DECIMAL_POINT);
        let n = format!("{size:.1}").replace('.', point);
        self.say(UNITS[unit], &[("n", n.into())])
    }

    /// The words of the browser's elements (`ui-*`, from `elements.ftl`),
    /// each variable written `{name}` for the client to fill in; English's
    /// where this catalogue lacks one.
    pub fn element_messages(self) -> &'static BTreeMap<String, String> {
        &ELEMENTS[self.index()]
    }
}

/// The messages of a catalogue file whose patterns are text and variables
/// only, each variable as `{name}` (one that is more is left out: the
/// catalogue tests refuse it in `elements.ftl`).
fn simple_messages(source: &str) -> BTreeMap<String, String> {
    let resource = ast_of(source);
    let mut messages = BTreeMap::new();
    for entry in &resource.body {
        let ast::Entry::Message(message) = entry else { continue };
        let Some(pattern) = &message.value else { continue };
        if let Some(text) = simple_text(pattern) {
            messages.insert(message.id.name.to_owned(), text);
        }
    }
    messages
}

fn simple_text(pattern: &ast::Pattern<&str>) -> Option<String> {
    let mut text = String::new();
    for element in &pattern.elements {
        match element {
            ast::PatternElement::TextElement { value } => text.push_str(value),
            ast::PatternElement::Placeable {
                expression: ast::Expression::Inline(ast::InlineExpression::VariableReference { id }),
            } => {
                text.push('{');
                text.push_str(id.name);
                text.push('}');
            }
            _ => return None,
        }
    }
    Some(text)
}

/// A catalogue file's syntax tree, with what did not parse left out.
fn ast_of(source: &str) -> ast::Resource<&str> {
    fluent_syntax::parser::parse(source).unwrap_or_else(|(resource, _)| resource)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Each message's id in a catalogue file, with the variables it uses.
    fn message_variables(source: &str) -> BTreeMap<String, BTreeSet<String>> {
        let resource = ast_of(source);
        let mut out = BTreeMap::new();
        for entry in &resource.body {
            let ast::Entry::Message(message) = entry else { continue };
            let mut variables = BTreeSet::new();
            if let Some(pattern) = &message.value {
                pattern_variables(pattern, &mut variables);
            }
            out.insert(message.id.name.to_owned(), variables);
        }
        out
    }

    fn pattern_variables(pattern: &ast::Pattern<&str>, into: &mut BTreeSet<String>) {
        for element in &pattern.elements {
            if let ast::PatternElement::Placeable { expression } = element {
                expression_variables(expression, into);
            }
        }
    }

    fn expression_variables(expression: &ast::Expression<&str>, into: &mut BTreeSet<String>) {
        let inline_variables = |inline: &ast::InlineExpression<&str>, into: &mut BTreeSet<String>| match inline {
            ast::InlineExpression::VariableReference { id } => {
                into.insert(id.name.to_owned());
            }
            ast::InlineExpression::Placeable { expression } => expression_variables(expression, into),
            _ => {}
        };
        match expression {
            ast::Expression::Inline(inline) => inline_variables(inline, into),
            ast::Expression::Select { selector, variants } => {
                inline_variables(selector, into);
                for variant in variants {
                    pattern_variables(&variant.value, into);
                }
            }
        }
    }

    fn fr() -> Locale {
        Locale::parse("fr").unwrap()
    }

    #[test]
    fn every_catalogue_parses_whole_and_holds_each_message_once() {
        for shipped in &SHIPPED {
            for source in shipped.sources {
                let resource = FluentResource::try_new(source.to_owned());
                assert!(resource.is_ok(), "{}: {:?}", shipped.tag, resource.err().map(|(_, e)| e));
            }
            let mut bundle = FluentBundle::new_concurrent(vec![shipped.tag.parse().unwrap()]);
            for source in shipped.sources {
                let added = bundle.add_resource(FluentResource::try_new(source.to_owned()).unwrap());
                assert!(added.is_ok(), "{}: {:?}", shipped.tag, added.err());
            }
        }
    }

    /// A catalogue with a message English lacks, or without one English has,
    /// or using a variable errand does not give, fails here.
    #[test]
    fn every_catalogue_has_englishs_messages_and_no_other_variables() {
        for (index, file) in ["errand.ftl", "elements.ftl"].into_iter().enumerate() {
            let english = message_variables(SHIPPED[0].sources[index]);
            assert!(!english.is_empty());
            for shipped in &SHIPPED[1..] {
                let theirs = message_variables(shipped.sources[index]);
                let missing: Vec<_> = english.keys().filter(|id| !theirs.contains_key(*id)).collect();
                let extra: Vec<_> = theirs.keys().filter(|id| !english.contains_key(*id)).collect();
                assert!(missing.is_empty(), "{}/{file} lacks {missing:?}", shipped.tag);
                assert!(extra.is_empty(), "{}/{file} has {extra:?}, which English has not", shipped.tag);
                for (id, variables) in &theirs {
                    let unknown: Vec<_> = variables.difference(&english[id]).collect();
                    assert!(
                        unknown.is_empty(),
                        "{}/{file}: {id} uses {unknown:?}, which English's does not",
                        shipped.tag
                    );
                }
            }
        }
    }

    #[test]
    fn the_elements_words_are_text_and_variables_only() {
        for shipped in &SHIPPED {
            let all = message_variables(shipped.sources[1]);
            let simple = simple_messages(shipped.sources[1]);
            let complex: Vec<_> = all.keys().filter(|id| !simple.contains_key(*id)).collect();
            assert!(complex.is_empty(), "{}: {complex:?} use more than variables", shipped.tag);
            assert!(simple.keys().all(|id| id.starts_with("ui-")), "{}: element ids start with ui-", shipped.tag);
        }
    }

    #[test]
    fn plural_rules_dates_counts_and_sizes_follow_the_language() {
        let one = fr().try_say("size-bytes", &[("count", 1u64.into()), ("n", "1".into())]).unwrap();
        let many = fr().try_say("size-bytes", &[("count", 2u64.into()), ("n", "2".into())]).unwrap();
        assert_ne!(one.replace('1', ""), many.replace('2', ""), "French has a word for one octet and another for two");
        assert_eq!(Locale::ENGLISH.size(812), "812 bytes");
        assert_eq!(Locale::ENGLISH.size(1_234_567), "1.2 MB");
        assert_eq!(Locale::ENGLISH.size(999_999_999), "1.0 GB");
        assert_eq!(fr().size(1_234_567), "1,2 Mo");
        assert_eq!(Locale::ENGLISH.count(1_234_567), "1,234,567");
        assert_eq!(fr().count(1_234_567), "1\u{202f}234\u{202f}567");
        let at = "2026-12-05T07:00:00Z".parse().unwrap();
        assert_eq!(Locale::ENGLISH.date_time(at, chrono_tz::UTC), "5 December 2026, 07:00 UTC");
        assert_eq!(fr().date_time(at, chrono_tz::Europe::Paris), "5 décembre 2026, 08:00 CET");
        assert_eq!(fr().date(at, chrono_tz::Europe::Paris), "5 décembre 2026");
    }

    proptest::proptest! {
        #[test]
        fn counts_only_add_a_separator_every_three_digits(n in proptest::prelude::any::<u64>()) {
            for locale in Locale::all() {
                let written = locale.count(n);
                let groups: Vec<&str> = written.split([',', '\u{202f}']).collect();
                proptest::prop_assert_eq!(groups.concat(), n.to_string());
                proptest::prop_assert!(groups.iter().skip(1).all(|group| group.len() == 3));
                proptest::prop_assert!((1..=3).contains(&groups[0].len()));
            }
        }
    }

    #[test]
    fn a_missing_message_is_said_in_english_or_named() {
        assert!(matches!(fr().try_say("no-such-message", &[]), Err(Unsaid::Missing { .. })));
        assert_eq!(fr().say("no-such-message", &[]), "no-such-message");
        assert!(
            matches!(Locale::ENGLISH.try_say("size-bytes", &[]), Err(Unsaid::Broken { .. })),
            "a variable not given is an error to the tests"
        );
    }

    #[test]
    fn element_messages_write_variables_for_the_client() {
        let messages = fr().element_messages();
        assert!(!messages.is_empty());
        assert!(messages.values().any(|m| m.contains('{')), "some element message has a variable");
        assert!(messages.values().all(|m| !m.contains('$')));
        assert_eq!(messages.len(), Locale::ENGLISH.element_messages().len());
    }
}
