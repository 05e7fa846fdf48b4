//! ACL rules and binds: the input is lines, the last one a bind and the others rules. Nothing
//! panics; a bind prints back to itself; an ACL permits a bind exactly when one of its rules does
//! (and anything when it has none).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tunnel_core::acl::{Acl, AclRule, Bind};

fuzz_target!(|text: &str| {
    let mut lines: Vec<&str> = text.lines().collect();
    let Some(bind_text) = lines.pop() else { return };
    let rules = lines;
    let parsed: Vec<Option<AclRule>> = rules.iter().map(|r| AclRule::parse(r).ok()).collect();
    let Ok(bind) = Bind::parse(bind_text) else {
        return;
    };
    let printed = bind.to_string();
    assert_eq!(Bind::parse(&printed).as_ref(), Ok(&bind), "{printed}");
    if let Ok(acl) = Acl::parse(&rules) {
        let any = parsed.iter().flatten().any(|r| r.permits(&bind));
        assert_eq!(acl.check(&bind).is_allowed(), rules.is_empty() || any);
    }
});
