//! The submit helper every form uses: one request at a time, the busy state, the server's
//! error (gone as soon as a new request leaves) and its per-field messages, and `on_ok`.

use super::dom::*;
use leptos::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use tunnel_core::FieldError;
use tunnel_web::api::ApiError;
use tunnel_web::components::submit::Submit;
use wasm_bindgen_test::*;

/// A 400 naming the `description` field, as the server sends it.
fn refused() -> ApiError {
    let body = r#"{"error_code":"ERR_TUNNEL_100","status_code":400,"msg":"description is too long",
        "details":{"operation_id":"op_1","field":"description","errors":[
            {"field":"description","message":"description is too long"}]}}"#;
    ApiError::from_response(400, body, None)
}

#[wasm_bindgen_test]
async fn submit_owns_busy_state_server_errors_and_success() {
    // Mounting sets up the task executor the action spawns its requests on.
    let _mounted = leptos::mount::mount_to(container(), || ());
    let owner = Owner::new();
    owner.set();
    // Each request answers the next queued result after a short wait; inputs are recorded.
    let answers = Rc::new(RefCell::new(vec![Ok(7), Err(refused())]));
    let sent = Rc::new(RefCell::new(Vec::<u32>::new()));
    let done = RwSignal::new(Vec::<u32>::new());
    let submit: Submit<u32, u32> = Submit::new(
        {
            let (answers, sent) = (answers.clone(), sent.clone());
            move |input: &u32| {
                sent.borrow_mut().push(*input);
                let answer = answers.borrow_mut().pop().expect("an answer");
                async move {
                    sleep_ms(50).await;
                    answer
                }
            }
        },
        move |answer: &u32| done.update(|d| d.push(*answer)),
    );
    let live = Memo::new(|_| Vec::<FieldError>::new());
    let description = submit.message(live, "description");

    // The first request fails: busy while on its way, then the server's error, with its
    // message on the field it names; on_ok does not run.
    submit.send(1);
    assert!(submit.busy());
    submit.send(2);
    assert_eq!(
        *sent.borrow(),
        [1],
        "a second submit while busy sends nothing"
    );
    wait_until("the refusal", || submit.error().is_some()).await;
    assert!(!submit.busy());
    assert_eq!(submit.error().map(|e| e.status), Some(400));
    assert_eq!(
        description.get_untracked().as_deref(),
        Some("description is too long")
    );
    assert!(done.get_untracked().is_empty());

    // A new request clears the old error at once; its success runs on_ok and leaves no error.
    submit.send(3);
    assert!(submit.error().is_none() && description.get_untracked().is_none());
    wait_until("the answer", || !done.get_untracked().is_empty()).await;
    assert_eq!(done.get_untracked(), [7]);
    wait_until("the end of the request", || !submit.busy()).await;
    assert!(submit.error().is_none());
    assert_eq!(*sent.borrow(), [1, 3]);
}
