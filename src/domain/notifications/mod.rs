//! How errand reaches people: their notification preferences (the
//! configuration's side of them) and their tenant's branding.

mod branding;
mod preferences;

pub use branding::{Branding, BrandingError};
pub use preferences::{Channel, Delivery, DigestEvery, NotificationRules};
