//! Azure's operation matching: case-insensitive, `*` over anything including `/`.

use super::super::*;

#[test]
fn patterns_match_like_azure() {
    let cases = [
        ("*", "Shoal/apps/read", true),
        ("*", "", true),
        ("*/read", "Shoal/apps/read", true),
        ("*/read", "Shoal/apps/functions/read", true),
        ("*/read", "Shoal/apps/write", false),
        ("*/read", "Shoal/apps/settings/list/action", false),
        ("*/read", "Shoal/apps/readers/write", false),
        ("Shoal/apps/*", "Shoal/apps/read", true),
        ("Shoal/apps/*", "Shoal/apps/functions/invoke/action", true),
        ("Shoal/apps/*", "Shoal/apps", false),
        ("Shoal/apps/*", "Shoal/appsettings/read", false),
        ("Shoal/apps/*", "Shoal/tenants/read", false),
        ("Shoal/*/read", "Shoal/apps/functions/read", true),
        ("Shoal/*/functions/*", "Shoal/apps/functions/write", true),
        ("*/functions/*", "Shoal/apps/read", false),
        ("Shoal/apps/read", "Shoal/apps/read", true),
        ("Shoal/apps/read", "Shoal/apps/read/more", false),
        ("Shoal/apps/read", "Shoal/apps/rea", false),
        ("Shoal/apps/read", "XShoal/apps/read", false),
        // Case-insensitive both ways.
        ("shoal/APPS/read", "Shoal/apps/READ", true),
        ("SHOAL/*", "shoal/apps/read", true),
        ("*/READ", "Shoal/apps/read", true),
        // Stars can stand for nothing, and several can follow each other.
        ("Shoal/apps/read*", "Shoal/apps/read", true),
        ("**", "", true),
        ("*a*b*", "xaybz", true),
        ("*a*b", "xaybz", false),
        ("", "", true),
        ("", "Shoal/apps/read", false),
        // Only ASCII folds; other characters compare exactly.
        ("Shoal/äpps/*", "Shoal/äpps/read", true),
        ("Shoal/Äpps/*", "Shoal/äpps/read", false),
    ];
    for (pattern, operation, want) in cases {
        assert_eq!(
            matches(pattern, operation),
            want,
            "{pattern:?} vs {operation:?}"
        );
    }
}

#[test]
fn many_stars_stay_fast() {
    let pattern = format!("{}b", "*a".repeat(100));
    let operation = "a".repeat(10_000);
    assert!(!matches(&pattern, &operation));
}
