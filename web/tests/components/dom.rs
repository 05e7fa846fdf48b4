//! Driving the DOM like a user: a container to mount into, finding elements, typing, choosing,
//! clicking, Escape, and waiting.

use leptos::task::tick;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, HtmlInputElement, HtmlSelectElement};

pub fn document() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

/// A fresh container in `<body>` to mount into.
pub fn container() -> HtmlElement {
    let div: HtmlElement = document().create_element("div").unwrap().unchecked_into();
    document().body().unwrap().append_child(&div).unwrap();
    div
}

pub fn find(root: &Element, selector: &str) -> Option<Element> {
    root.query_selector(selector).unwrap()
}

pub fn get(root: &Element, selector: &str) -> Element {
    find(root, selector).unwrap_or_else(|| panic!("no element matches {selector}"))
}

pub fn text(root: &Element, selector: &str) -> String {
    get(root, selector).text_content().unwrap_or_default()
}

pub fn count(root: &Element, selector: &str) -> u32 {
    root.query_selector_all(selector).unwrap().length()
}

pub fn bubbling(kind: &str) -> web_sys::Event {
    let init = web_sys::EventInit::new();
    init.set_bubbles(true);
    web_sys::Event::new_with_event_init_dict(kind, &init).unwrap()
}

pub async fn type_into(root: &Element, selector: &str, value: &str) {
    let input: HtmlInputElement = get(root, selector).unchecked_into();
    input.set_value(value);
    input.dispatch_event(&bubbling("input")).unwrap();
    tick().await;
}

pub async fn choose(root: &Element, selector: &str, value: &str) {
    let select: HtmlSelectElement = get(root, selector).unchecked_into();
    select.set_value(value);
    select.dispatch_event(&bubbling("change")).unwrap();
    tick().await;
}

pub async fn click(root: &Element, selector: &str) {
    get(root, selector).unchecked_into::<HtmlElement>().click();
    tick().await;
}

pub fn is_disabled(root: &Element, selector: &str) -> bool {
    get(root, selector).has_attribute("disabled")
}

pub async fn press_escape() {
    let init = web_sys::KeyboardEventInit::new();
    init.set_key("Escape");
    init.set_bubbles(true);
    let ev = web_sys::KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap();
    // Where a real key press goes: the focused element (inside an open dialog), bubbling up.
    match document().active_element() {
        Some(el) => el.dispatch_event(&ev).unwrap(),
        None => web_sys::window().unwrap().dispatch_event(&ev).unwrap(),
    };
    tick().await;
}

pub async fn sleep_ms(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms)
            .unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

/// The values of the `<option>`s of the select matching `selector`.
pub fn option_values(root: &Element, selector: &str) -> Vec<String> {
    let options = root
        .query_selector_all(&format!("{selector} option"))
        .unwrap();
    (0..options.length())
        .map(|i| {
            options
                .get(i)
                .unwrap()
                .unchecked_into::<web_sys::HtmlOptionElement>()
                .value()
        })
        .collect()
}

/// Polls `done` for up to 5 s.
pub async fn wait_until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..100 {
        if done() {
            return;
        }
        sleep_ms(50).await;
    }
    panic!("timed out waiting for {what}");
}
