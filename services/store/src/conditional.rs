//! Conditional requests (RFC 9110 §13): the preconditions `If-Match` and `If-None-Match` name,
//! and the steps every conditional write shares: read a resource's ETag while locking its row
//! for the rest of the transaction, then check the request's precondition against it.

use crate::{Etag, StoreError, Tx};

/// The entity tags an `If-Match` or `If-None-Match` header names: `*` or a list. The API keeps
/// only the tags that can equal one of ours under the header's comparison (RFC 9110 §8.8.3.2):
/// strong ones for `If-Match`, weak or strong for `If-None-Match`. Any other well-formed tag
/// matches nothing, so a list of only such tags is empty here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EtagList {
    /// `*`: any current representation.
    Any,
    Tags(Vec<Etag>),
}

impl EtagList {
    /// Whether the list names the current representation (None when there is none).
    pub fn names(&self, current: Option<Etag>) -> bool {
        match (self, current) {
            (_, None) => false,
            (EtagList::Any, Some(_)) => true,
            (EtagList::Tags(tags), Some(current)) => tags.contains(&current),
        }
    }
}

/// A request's preconditions from `If-Match` / `If-None-Match` (RFC 9110 §13.1.1–13.1.2).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Precondition {
    /// No condition: create or replace.
    #[default]
    None,
    /// Either header or both; `If-Match` is evaluated first (RFC 9110 §13.2.2).
    Headers {
        if_match: Option<EtagList>,
        if_none_match: Option<EtagList>,
    },
}

impl Precondition {
    /// `If-Match: "<etag>"`: the resource must exist with this entity tag.
    pub fn matches(etag: Etag) -> Self {
        Precondition::Headers {
            if_match: Some(EtagList::Tags(vec![etag])),
            if_none_match: None,
        }
    }

    /// `If-Match` holds (or is absent): the current representation is one it names.
    pub fn if_match_holds(&self, current: Option<Etag>) -> bool {
        match self {
            Precondition::Headers {
                if_match: Some(list),
                ..
            } => list.names(current),
            _ => true,
        }
    }

    /// `If-None-Match` holds (or is absent): the current representation is none it names.
    pub fn if_none_match_holds(&self, current: Option<Etag>) -> bool {
        match self {
            Precondition::Headers {
                if_none_match: Some(list),
                ..
            } => !list.names(current),
            _ => true,
        }
    }

    /// Checks a write's precondition against the current entity tag (None when absent).
    pub fn check(&self, current: Option<Etag>) -> Result<(), StoreError> {
        if self.if_match_holds(current) && self.if_none_match_holds(current) {
            Ok(())
        } else {
            Err(StoreError::PreconditionFailed)
        }
    }
}

/// The error for a create that lost a race with a concurrent create of the same resource: the
/// upserts only update the row whose ETag they read under lock (none, for a create), so the
/// loser writes nothing. `If-None-Match: *` answers 412; otherwise the client may retry.
pub fn lost_create_race(precondition: &Precondition, what: &str) -> StoreError {
    // The row another request created now exists, so only `If-None-Match: *` fails on it;
    // a tag it names cannot be the fresh ETag.
    if let Precondition::Headers {
        if_none_match: Some(EtagList::Any),
        ..
    } = precondition
    {
        StoreError::PreconditionFailed
    } else {
        StoreError::Conflict(format!(
            "{what} was created concurrently; retry the request"
        ))
    }
}

/// The current ETag of the row `lock_sql` selects (`select etag … for update`, with the keys
/// bound in order), locked until the transaction ends; None when there is no such row.
pub(crate) async fn locked_etag(
    tx: &mut Tx,
    lock_sql: &'static str,
    keys: &[&str],
) -> Result<Option<Etag>, StoreError> {
    let mut query = sqlx::query_scalar(lock_sql);
    for key in keys {
        query = query.bind(*key);
    }
    Ok(query.fetch_optional(&mut **tx).await?)
}

/// Deletes the row `lock_sql` and `delete_sql` name by the same keys: NotFound when it does
/// not exist, PreconditionFailed when the precondition does not hold.
pub(crate) async fn delete_checked(
    tx: &mut Tx,
    lock_sql: &'static str,
    delete_sql: &'static str,
    keys: &[&str],
    precondition: Precondition,
) -> Result<(), StoreError> {
    let current = locked_etag(tx, lock_sql, keys).await?;
    if current.is_none() {
        return Err(StoreError::NotFound);
    }
    precondition.check(current)?;
    let mut query = sqlx::query(delete_sql);
    for key in keys {
        query = query.bind(*key);
    }
    query.execute(&mut **tx).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preconditions_against_present_and_absent_resources() {
        let current = Etag::new_v4();
        let other = Etag::new_v4();
        let headers = |if_match, if_none_match| Precondition::Headers {
            if_match,
            if_none_match,
        };
        let tags = |t: &[Etag]| Some(EtagList::Tags(t.to_vec()));
        #[rustfmt::skip]
        let cases: &[(&str, Precondition, Option<Etag>, bool)] = &[
            ("no condition, present", Precondition::None, Some(current), true),
            ("no condition, absent", Precondition::None, None, true),
            ("If-Match: * present", headers(Some(EtagList::Any), None), Some(current), true),
            ("If-Match: * absent", headers(Some(EtagList::Any), None), None, false),
            ("If-Match current", Precondition::matches(current), Some(current), true),
            ("If-Match other", Precondition::matches(other), Some(current), false),
            ("If-Match absent", Precondition::matches(current), None, false),
            ("If-Match list naming current", headers(tags(&[other, current]), None), Some(current), true),
            ("If-Match empty list", headers(tags(&[]), None), Some(current), false),
            ("If-None-Match: * present", headers(None, Some(EtagList::Any)), Some(current), false),
            ("If-None-Match: * absent", headers(None, Some(EtagList::Any)), None, true),
            ("If-None-Match current", headers(None, tags(&[current])), Some(current), false),
            ("If-None-Match list naming current", headers(None, tags(&[other, current])), Some(current), false),
            ("If-None-Match other", headers(None, tags(&[other])), Some(current), true),
            ("If-None-Match tag, absent", headers(None, tags(&[current])), None, true),
            ("both hold", headers(tags(&[current]), tags(&[other])), Some(current), true),
            ("If-Match holds, If-None-Match fails", headers(Some(EtagList::Any), tags(&[current])), Some(current), false),
        ];
        for (name, precondition, current, holds) in cases {
            assert_eq!(precondition.check(*current).is_ok(), *holds, "{name}");
        }
    }

    #[test]
    fn only_if_none_match_star_turns_a_lost_create_race_into_412() {
        let star = Precondition::Headers {
            if_match: None,
            if_none_match: Some(EtagList::Any),
        };
        assert!(matches!(
            lost_create_race(&star, "app x"),
            StoreError::PreconditionFailed
        ));
        let tag = Precondition::Headers {
            if_match: None,
            if_none_match: Some(EtagList::Tags(vec![Etag::new_v4()])),
        };
        assert!(matches!(
            lost_create_race(&tag, "app x"),
            StoreError::Conflict(_)
        ));
        assert!(matches!(
            lost_create_race(&Precondition::None, "app x"),
            StoreError::Conflict(_)
        ));
    }
}
