//! Entry point of the console's WASM binary: mounts the app, nothing else.
fn main() {
    tunnel_web::mount();
}
