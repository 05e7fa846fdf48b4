//! Wire types of every resource, request and list of the API, with one `validate()` per request.
//!
//! One module per API area. Requests deny unknown fields (400 naming the field, see
//! `docs/api/README.md`);
//! optional create fields treat `""`, `0` and `[]` as "not given"; update fields are `Option`s
//! where absent and `null` both mean "unchanged".

pub mod api_key;
pub mod backend;
pub mod credential;
pub mod event;
pub mod event_destination;
pub mod event_subscription;
pub mod ssh_ca;
pub mod tls_edge;
pub mod tunnel_session;
pub mod user;

use crate::errors::{Error, FieldError, collect};
use serde::{Deserialize, Serialize};

/// A request field accepted only as `null` or absent: what the official clients send for the
/// things this server does not implement (TLS edge modules, event target kinds). `Some` when a
/// value was given, which validation refuses naming the field; nothing of the value is kept
/// (read as `IgnoredAny`, so no JSON value's code is in the console).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unsupported;

impl<'de> Deserialize<'de> for Unsupported {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Unsupported)
    }
}

impl Serialize for Unsupported {
    /// Only a refused request holds one; it is written as `null`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_unit()
    }
}

impl Unsupported {
    /// The names of the fields (`names[i]` for `fields[i]`) given a value other than `null`.
    fn given<const N: usize>(
        names: [&'static str; N],
        fields: [Option<Unsupported>; N],
    ) -> impl Iterator<Item = &'static str> {
        names
            .into_iter()
            .zip(fields)
            .filter_map(|(name, field)| field.map(|_| name))
    }
}

/// The schema of a request field accepted only as `null`, saying why.
#[cfg(feature = "openapi")]
fn null_schema(why: &str) -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Null)
        .description(Some(why))
        .build()
}

/// The TLS edge modules and event target kinds this server does not implement
/// (`tls_edge::UNSUPPORTED_EDGE_MODULES`, `event_destination::UNSUPPORTED_TARGETS`), which
/// official clients send as `null`.
#[cfg(feature = "openapi")]
fn null_only() -> utoipa::openapi::schema::Object {
    null_schema(
        "Not implemented by this server: accepted only as `null`; any other value is refused \
         with this field named.",
    )
}

/// A TLS edge update's `backend`, which has its own routes.
#[cfg(feature = "openapi")]
fn null_backend() -> utoipa::openapi::schema::Object {
    null_schema(
        "Changed only through `PUT /edges/tls/{id}/backend`: accepted here only as `null`, as \
         official clients send it.",
    )
}

/// A reference to another resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Ref {
    pub id: String,
    pub uri: String,
}

/// Validation shared by the console (as the user types) and the server (before storing).
pub trait Validate {
    /// Every problem of the request, each naming its field.
    fn field_errors(&self) -> Vec<FieldError>;

    fn validate(&self) -> Result<(), Error> {
        collect(self.field_errors())
    }
}

/// Declares a list page: the items under their own property, `uri` and `next_page_uri`.
macro_rules! list_page {
    ($(#[$doc:meta])* $name:ident, $field:ident, $item:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        pub struct $name {
            pub $field: Vec<$item>,
            pub uri: String,
            #[cfg_attr(feature = "openapi", schema(required = true))]
            pub next_page_uri: Option<String>,
        }

        impl $crate::resources::ListPage for $name {
            type Item = $item;
            const FIELD: &'static str = stringify!($field);
            fn items(&self) -> &[$item] { &self.$field }
            fn next_page_uri(&self) -> Option<&str> { self.next_page_uri.as_deref() }
        }
    };
}
pub(crate) use list_page;

/// What every list page offers, so paging code is written once.
pub trait ListPage {
    type Item;
    /// The JSON property holding the items.
    const FIELD: &'static str;
    fn items(&self) -> &[Self::Item];
    fn next_page_uri(&self) -> Option<&str>;
}

/// Reads `null` as the type's default, for required fields: absent, `null` and empty are then
/// one case, which validation reports under the field's name (docs/api/README.md, "Bodies").
pub(crate) fn null_is_default<'de, D, T>(de: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + serde::Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(de)?.unwrap_or_default())
}

/// `Some("")` and `None` both mean "not given" on create.
pub fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|s| !s.is_empty())
}

pub(crate) fn check_text(
    limit: crate::limits::TextLimit,
    value: &Option<String>,
    errors: &mut Vec<FieldError>,
) {
    if let Some(value) = value {
        errors.extend(limit.check(value));
    }
}

/// `owner_id` of a create request: a user (`usr_…`) or bot (`bot_…`) id.
pub(crate) fn check_owner(owner: &str, errors: &mut Vec<FieldError>) {
    use crate::ids::IdKind;
    if let Err(e) = crate::ids::parse_id_of(&[IdKind::User, IdKind::Bot], owner) {
        errors.push(FieldError::new("owner_id", e.to_string()));
    }
}

pub(crate) fn check_id(
    kind: crate::ids::IdKind,
    field: String,
    id: &str,
    errors: &mut Vec<FieldError>,
) {
    if let Err(e) = crate::ids::parse_id(kind, id) {
        errors.push(FieldError::new(field, e.to_string()));
    }
}
