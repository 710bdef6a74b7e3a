//! The API calls every resource makes the same way — read, create without taking over what
//! exists, update, delete, import by id — each failure reported as a diagnostic at the
//! attribute the API's problem names. The resources keep what differs: their paths, bodies and
//! how a response becomes state.

use std::fmt::Display;

use serde_json::Value as Json;
use shoal_client::{Answer, ApiClient, Precondition};
use tf_provider::Diagnostics;

use crate::problem::{FieldMap, report};
use crate::resources::{Private, PrivateState};

/// One resource instance as the API knows it.
pub struct Target<'a> {
    pub path: String,
    /// What messages call it, e.g. `function app contoso/orders`.
    pub what: String,
    /// Its import id, for the "already exists" hint.
    pub id: String,
    pub fields: &'a FieldMap,
}

impl<'a> Target<'a> {
    pub fn new(kind: &str, id: &impl Display, path: String, fields: &'a FieldMap) -> Target<'a> {
        Target {
            path,
            what: format!("{kind} {id}"),
            id: id.to_string(),
            fields,
        }
    }
}

/// How a create makes sure it does not replace something that exists.
pub enum Guard {
    /// `If-None-Match: *`: the API answers 412 when it exists.
    IfNoneMatch,
    /// The API takes no precondition here: a GET first.
    LookFirst,
}

/// What a read found.
pub enum Found {
    Entity(Answer),
    /// Deleted outside Terraform: dropping it from state plans its re-creation.
    Gone,
    /// The error is reported; the state stays as it was.
    Failed,
}

/// The private state that goes with a response: its `ETag`.
pub fn private(entity: &Answer) -> PrivateState {
    Some(Private {
        etag: entity.etag.clone(),
    })
}

pub async fn read(client: &ApiClient, diags: &mut Diagnostics, target: &Target<'_>) -> Found {
    match client.get(&target.path).await {
        Ok(Some(entity)) => Found::Entity(entity),
        Ok(None) => Found::Gone,
        Err(error) => {
            report(diags, &error, &target.what, target.fields);
            Found::Failed
        }
    }
}

pub async fn create(
    client: &ApiClient,
    diags: &mut Diagnostics,
    target: &Target<'_>,
    body: &Json,
    guard: Guard,
) -> Option<Answer> {
    let precondition = match guard {
        Guard::IfNoneMatch => Precondition::Absent,
        Guard::LookFirst => match read(client, diags, target).await {
            Found::Gone => Precondition::None,
            Found::Entity(_) => {
                exists(diags, target);
                return None;
            }
            Found::Failed => return None,
        },
    };
    match client.put(&target.path, body, &precondition).await {
        Ok(entity) => Some(entity),
        Err(error) if error.status() == Some(412) => {
            exists(diags, target);
            None
        }
        Err(error) => {
            report(diags, &error, &target.what, target.fields);
            None
        }
    }
}

fn exists(diags: &mut Diagnostics, target: &Target<'_>) {
    diags.root_error(
        format!("{} already exists", target.what),
        format!(
            "To manage it with Terraform, import it: terraform import <resource address> {}",
            target.id
        ),
    );
}

/// The write of an update; `None` when it failed (reported), so nothing was written and the
/// prior state still describes the object.
pub async fn update(
    client: &ApiClient,
    diags: &mut Diagnostics,
    target: &Target<'_>,
    body: &Json,
    precondition: &Precondition,
) -> Option<Answer> {
    match client.put(&target.path, body, precondition).await {
        Ok(entity) => Some(entity),
        Err(error) => {
            report(diags, &error, &target.what, target.fields);
            None
        }
    }
}

pub async fn destroy(
    client: &ApiClient,
    diags: &mut Diagnostics,
    target: &Target<'_>,
) -> Option<()> {
    match client.delete(&target.path).await {
        Ok(()) => Some(()),
        Err(error) => {
            report(diags, &error, &target.what, target.fields);
            None
        }
    }
}

/// An import: the state holds only the id, which the read that follows fills in.
pub fn import<S>(
    diags: &mut Diagnostics,
    kind: &str,
    parsed: Result<S, String>,
) -> Option<(S, PrivateState)> {
    match parsed {
        Ok(state) => Some((state, None)),
        Err(message) => {
            diags.root_error(format!("Cannot import the {kind}"), message);
            None
        }
    }
}
