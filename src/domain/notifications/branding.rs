//! A tenant's branding: how its users' emails present it. Tenant copy is
//! plain text: checked here when set, shown escaped (never as markup), and
//! the footer's only variable is `{name}`, so a tenant cannot put markup or
//! anything else of errand's into its users' mail.

use serde::{Deserialize, Serialize};

/// What a tenant set; `None`: errand's own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Branding {
    /// Shown at the head of its emails and in their footer, e.g. `Acme`.
    #[serde(default)]
    pub name: Option<String>,
    /// `https://` only (the API also checks where it points, as for webhooks).
    #[serde(default)]
    pub logo_url: Option<String>,
    /// `#rrggbb`: the emails' buttons.
    #[serde(default)]
    pub primary_color: Option<String>,
    /// The emails' sender name (their address stays errand's).
    #[serde(default)]
    pub from_name: Option<String>,
    /// Plain text under each email; `{name}` is the tenant's name.
    #[serde(default)]
    pub footer: Option<String>,
}

/// Why a branding was refused: the field, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct BrandingError {
    pub field: &'static str,
    pub reason: String,
}

/// The footer's variables, each `{…}` in it.
const FOOTER_VARIABLES: [&str; 1] = ["name"];

impl Branding {
    /// This branding, checked and tidied (blank is unset; a colour in lower
    /// case), or why not.
    pub fn checked(self) -> Result<Self, BrandingError> {
        let refused = |field, reason: &str| Err(BrandingError { field, reason: reason.to_owned() });
        let name = text("name", self.name, 100, false)?;
        let from_name = text("from_name", self.from_name, 100, false)?;
        let footer = text("footer", self.footer, 500, true)?;
        if let Some(footer) = &footer {
            for variable in variables(footer) {
                if !FOOTER_VARIABLES.contains(&variable) {
                    return refused("footer", &format!("{{{variable}}} is no variable; there is {{name}}"));
                }
            }
        }
        let primary_color = match self.primary_color.filter(|c| !c.trim().is_empty()) {
            None => None,
            Some(color) => {
                let color = color.trim().to_ascii_lowercase();
                let hex = color.strip_prefix('#').filter(|h| h.len() == 6 && h.bytes().all(|b| b.is_ascii_hexdigit()));
                if hex.is_none() {
                    return refused("primary_color", "a colour is #rrggbb, e.g. #2457d6");
                }
                Some(color)
            }
        };
        let logo_url = text("logo_url", self.logo_url, 2048, false)?;
        if logo_url.as_deref().is_some_and(|url| !url.starts_with("https://")) {
            return refused("logo_url", "a logo is served over https://");
        }
        Ok(Self { name, logo_url, primary_color, from_name, footer })
    }

    /// The footer as people read it: `{name}` replaced by the tenant's name
    /// (or `errand`).
    pub fn footer_text(&self) -> Option<String> {
        let name = self.name.as_deref().unwrap_or("errand");
        self.footer.as_ref().map(|footer| footer.replace("{name}", name))
    }
}

/// `value` trimmed, `None` when blank; refused when longer than `max`
/// characters or holding control characters (line breaks only where
/// `lines`).
fn text(field: &'static str, value: Option<String>, max: usize, lines: bool) -> Result<Option<String>, BrandingError> {
    let Some(value) = value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) else { return Ok(None) };
    if value.chars().count() > max {
        return Err(BrandingError { field, reason: format!("at most {max} characters") });
    }
    if value.chars().any(|c| c.is_control() && !(lines && c == '\n')) {
        return Err(BrandingError { field, reason: "no control characters".into() });
    }
    Ok(Some(value))
}

/// The names of the `{…}` in `text`.
fn variables(text: &str) -> impl Iterator<Item = &str> {
    text.split('{').skip(1).map(|after| after.split_once('}').map_or(after, |(name, _)| name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn branding(name: &str, color: &str, footer: &str) -> Branding {
        Branding {
            name: Some(name.into()),
            primary_color: Some(color.into()),
            footer: Some(footer.into()),
            ..Branding::default()
        }
    }

    #[test]
    fn copy_is_plain_text_with_only_the_name_for_a_variable() {
        let ok = branding(" Acme ", "#2457D6", "Sent for {name}.\nQuestions? Reply.").checked().unwrap();
        assert_eq!(ok.name.as_deref(), Some("Acme"));
        assert_eq!(ok.primary_color.as_deref(), Some("#2457d6"));
        assert_eq!(ok.footer_text().as_deref(), Some("Sent for Acme.\nQuestions? Reply."));
        let blank = Branding { name: Some("  ".into()), ..Branding::default() }.checked().unwrap();
        assert_eq!(blank, Branding::default(), "blank is unset");

        for (refused, field) in [
            (branding("Acme", "blue", ""), "primary_color"),
            (branding("Acme", "#12345", ""), "primary_color"),
            (branding("Acme\r\nBcc: x", "#123456", ""), "name"),
            (branding("Acme", "#123456", "{user_email}"), "footer"),
            (branding(&"x".repeat(101), "#123456", ""), "name"),
            (Branding { logo_url: Some("http://acme.example/logo.png".into()), ..Branding::default() }, "logo_url"),
        ] {
            assert_eq!(refused.checked().unwrap_err().field, field);
        }
    }
}
