//! How errand reaches people: their notification preferences (the
//! configuration's side of them), their tenant's branding, and their
//! language.

mod branding;
mod locale;
mod preferences;
mod words;

pub use branding::{Branding, BrandingError};
pub use locale::Locale;
pub use preferences::{Channel, Delivery, DigestEvery, NotificationRules};
pub use words::{Arg, Unsaid};
