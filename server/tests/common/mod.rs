//! Shared helpers of the server's tests (every test binary includes this module): an app on
//! the run's database ([`TestApp::new`]: a SQLite file of its own, or a fresh database of its
//! own on the shared PostgreSQL cluster when `TUNNEL_TEST_POSTGRES` is set; [`test_config`]:
//! in-memory SQLite or that PostgreSQL database) with two accounts (an admin and a non-admin
//! user in the first, an admin in the second), a small request builder for `oneshot` calls on
//! the router, responses decoded as core's wire types (`tunnel_core::resources`,
//! `tunnel_core::errors::ErrorBody`), and the `tunnel-server` binary as a real process
//! (`process`).
#![allow(dead_code)] // Each test binary uses a different part.

pub mod contract;
pub mod process;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request};
use http_body_util::BodyExt as _;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tower::ServiceExt as _;
use tunnel_core::errors::ErrorBody;
use tunnel_core::ids::IdKind;
use tunnel_server::config::Config;
use tunnel_server::state::AppState;
use tunnel_server::store::{DatabaseUrl, Principal};
use tunnel_testkit::postgres::{TestDatabase, test_database};

pub const BASE: &str = "http://127.0.0.1:8080/api";

#[derive(Debug, Clone)]
pub struct TestApp {
    pub state: AppState,
    pub router: Router,
    pub account_id: String,
    pub admin_id: String,
    pub admin_key: String,
    pub user_id: String,
    pub user_key: String,
    pub other_account_id: String,
    pub other_key: String,
    /// The directory of the app's SQLite file ([`TestApp::new`]), removed once the last clone
    /// of the app drops.
    pub data_dir: Option<std::sync::Arc<tempfile::TempDir>>,
}

/// The configuration of one in-process test app: [`Config::in_memory`], on a fresh PostgreSQL
/// database instead when the run names a shared cluster (`TUNNEL_TEST_POSTGRES`, see
/// `tunnel_testkit::postgres`), so the same tests are the contract of both stores.
pub fn test_config() -> Config {
    let mut config = Config::in_memory();
    let database = test_database().expect("a test database");
    if let TestDatabase::Postgres(url) = &database {
        config.database = DatabaseUrl::parse(url).expect("a PostgreSQL database URL");
    }
    config.server_key = database
        .server_key()
        .map(|k| k.parse().expect("a server key"));
    config
}

impl TestApp {
    /// On SQLite, the app keeps its database in a file of a directory of its own, as a server
    /// does: reads of one row and of list pages then take the store's direct path, which an
    /// in-memory database does not have.
    pub async fn new() -> TestApp {
        let mut config = test_config();
        let dir = (config.database == DatabaseUrl::SqliteMemory)
            .then(|| tempfile::tempdir().expect("a temporary directory"));
        if let Some(dir) = &dir {
            config.database = DatabaseUrl::SqliteFile(dir.path().join("tunnel.db"));
        }
        let mut app = TestApp::with_config(config).await;
        app.data_dir = dir.map(std::sync::Arc::new);
        app
    }

    pub async fn with_config(config: Config) -> TestApp {
        let state = AppState::open(config).await.expect("open state");
        let admin = state
            .store
            .create_account("first", "Ada Admin")
            .await
            .unwrap();
        let member = Principal {
            kind: IdKind::User,
            name: "Mo Member",
            admin: false,
        };
        let user = state
            .store
            .create_principal(&admin.account_id, &member)
            .await
            .unwrap()
            .unwrap();
        let other = state
            .store
            .create_account("second", "Otto Other")
            .await
            .unwrap();
        TestApp {
            router: tunnel_server::app(state.clone()),
            state,
            account_id: admin.account_id,
            admin_id: admin.principal_id,
            admin_key: admin.api_key,
            user_id: user.principal_id,
            user_key: user.api_key,
            other_account_id: other.account_id,
            other_key: other.api_key,
            data_dir: None,
        }
    }

    /// A request as the admin of the first account, with the version header.
    pub fn call(&self, method: Method, path: &str) -> Call {
        Call {
            method,
            path: path.to_owned(),
            headers: vec![
                ("authorization".into(), format!("Bearer {}", self.admin_key)),
                ("service-version".into(), "2".into()),
            ],
            body: None,
            outside_api: false,
        }
    }

    pub fn get(&self, path: &str) -> Call {
        self.call(Method::GET, path)
    }

    pub fn delete(&self, path: &str) -> Call {
        self.call(Method::DELETE, path)
    }

    pub fn post(&self, path: &str, body: Value) -> Call {
        self.call(Method::POST, path).json(body)
    }

    pub fn patch(&self, path: &str, body: Value) -> Call {
        self.call(Method::PATCH, path).json(body)
    }

    pub fn put(&self, path: &str, body: Value) -> Call {
        self.call(Method::PUT, path).json(body)
    }

    /// POST and expect 201; returns the body.
    pub async fn create(&self, path: &str, body: Value) -> Value {
        let resp = self.post(path, body).send(self).await;
        assert_eq!(resp.status, 201, "{}", resp.text);
        resp.json
    }

    /// POST and expect 201; returns the created resource as its wire type (see [`Resp::body`]).
    pub async fn created<T: DeserializeOwned + Serialize>(&self, path: &str, body: Value) -> T {
        let resp = self.post(path, body).send(self).await;
        assert_eq!(resp.status, 201, "{}", resp.text);
        resp.body()
    }

    /// POST as the holder of `key` and expect 201; returns the created resource as its wire
    /// type (see [`Resp::body`]).
    pub async fn created_by<T: DeserializeOwned + Serialize>(
        &self,
        key: &str,
        path: &str,
        body: Value,
    ) -> T {
        let resp = self.post(path, body).key(key).send(self).await;
        assert_eq!(resp.status, 201, "{}", resp.text);
        resp.body()
    }

    /// PATCH and expect 200; returns the updated resource as its wire type (see
    /// [`Resp::body`]).
    pub async fn patched<T: DeserializeOwned + Serialize>(&self, path: &str, body: Value) -> T {
        let resp = self.patch(path, body).send(self).await;
        assert_eq!(resp.status, 200, "{}", resp.text);
        resp.body()
    }

    /// A new principal (a user, or a bot) of `account`, not an admin, without a name.
    pub async fn principal(&self, account: &str, bot: bool) -> tunnel_server::store::NewPrincipal {
        let principal = Principal {
            kind: if bot { IdKind::Bot } else { IdKind::User },
            name: "",
            admin: false,
        };
        self.state
            .store
            .create_principal(account, &principal)
            .await
            .unwrap()
            .unwrap()
    }

    /// DELETE and expect 204.
    pub async fn deleted(&self, path: &str) {
        let resp = self.delete(path).send(self).await;
        assert_eq!(resp.status, 204, "DELETE {path}: {}", resp.text);
    }

    /// GET and expect the 404 of a resource that does not exist (`ERR_TUNNEL_120`).
    pub async fn gone(&self, path: &str) {
        self.get(path).send(self).await.error(404, "ERR_TUNNEL_120");
    }

    /// GET and expect 200; returns the body as its wire type (see [`Resp::body`]).
    pub async fn fetch<T: DeserializeOwned + Serialize>(&self, path: &str) -> T {
        let resp = self.get(path).send(self).await;
        assert_eq!(resp.status, 200, "{}", resp.text);
        resp.body()
    }
}

#[derive(Debug, Clone)]
pub struct Call {
    pub method: Method,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    /// Send `path` as is, outside `/api` (the console).
    pub outside_api: bool,
}

impl Call {
    pub fn outside_api(mut self) -> Call {
        self.outside_api = true;
        self
    }

    pub fn json(self, body: Value) -> Call {
        self.raw("application/json", serde_json::to_vec(&body).unwrap())
    }

    pub fn raw(mut self, content_type: &str, body: impl Into<Vec<u8>>) -> Call {
        self.headers.retain(|(n, _)| n != "content-type");
        if !content_type.is_empty() {
            self.headers
                .push(("content-type".into(), content_type.into()));
        }
        self.body = Some(body.into());
        self
    }

    pub fn header(mut self, name: &str, value: &str) -> Call {
        self.headers.retain(|(n, _)| n != name);
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn without(mut self, name: &str) -> Call {
        self.headers.retain(|(n, _)| n != name);
        self
    }

    pub fn key(self, key: &str) -> Call {
        self.header("authorization", &format!("Bearer {key}"))
    }

    /// The path under `/api` (`/credentials`), or an absolute uri of the API.
    fn target(&self) -> String {
        if self.outside_api {
            return self.path.clone();
        }
        match self.path.strip_prefix(BASE) {
            Some(rest) => format!("/api{rest}"),
            // `/api`, `/api/…` or `/api?…` as given; `/api_keys` is a path under `/api`.
            None if !self.path.starts_with('/')
                || self
                    .path
                    .strip_prefix("/api")
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', '?'])) =>
            {
                self.path.clone()
            }
            None => format!("/api{}", self.path),
        }
    }

    /// Sends and asserts an error response (see [`Resp::error`]); returns the response.
    pub async fn fails(self, app: &TestApp, status: u16, code: &str) -> Resp {
        let resp = self.send(app).await;
        resp.error(status, code);
        resp
    }

    pub async fn send(self, app: &TestApp) -> Resp {
        let target = self.target();
        let mut builder = Request::builder().method(self.method.clone()).uri(&target);
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        let request = builder
            .body(self.body.map(Body::from).unwrap_or_else(Body::empty))
            .unwrap();
        let response = app.router.clone().oneshot(request).await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if !self.outside_api && !headers.contains_key("content-encoding") {
            contract::check(self.method.as_str(), &target, status, &json, &text);
        }
        Resp {
            status,
            headers,
            json,
            text,
            bytes: bytes.to_vec(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub headers: HeaderMap,
    pub json: Value,
    pub text: String,
    pub bytes: Vec<u8>,
}

impl Resp {
    /// The body as sent (compressed bodies are not decoded).
    pub fn text_bytes(&self) -> Vec<u8> {
        self.bytes.clone()
    }

    /// The body as the wire type `T` of `tunnel_core`. It must be exactly a `T`: encoded again
    /// it gives back the JSON that was sent, nothing missing and nothing extra, so comparing
    /// typed values checks as much as comparing the raw JSON did.
    pub fn body<T: DeserializeOwned + Serialize>(&self) -> T {
        let name = std::any::type_name::<T>();
        let value: T = serde_json::from_value(self.json.clone())
            .unwrap_or_else(|e| panic!("not a {name}: {e}: {}", self.text));
        assert_eq!(
            serde_json::to_value(&value).unwrap(),
            self.json,
            "the body is more or other than a {name}"
        );
        value
    }

    /// The body as the API's error body (`docs/errors.md`).
    pub fn error_body(&self) -> ErrorBody {
        serde_json::from_value(self.json.clone())
            .unwrap_or_else(|e| panic!("not an error body: {e}: {}", self.text))
    }

    /// Asserts an error response: status, code, a message, the operation id in body and header;
    /// returns the error body.
    pub fn error(&self, status: u16, code: &str) -> ErrorBody {
        assert_eq!(self.status, status, "{}", self.text);
        let body = self.error_body();
        assert_eq!(body.error_code, code, "{}", self.text);
        assert_eq!(body.status_code, status, "{}", self.text);
        assert!(!body.msg.is_empty(), "{}", self.text);
        let op = body.details.operation_id.as_str();
        assert!(op.starts_with("op_"), "{op}");
        assert_eq!(
            self.headers
                .get("operation-id")
                .and_then(|v| v.to_str().ok()),
            Some(op)
        );
        body
    }

    /// Asserts an error response (see [`Resp::error`]) naming `field`; returns the error body.
    pub fn error_at(&self, status: u16, code: &str, field: &str) -> ErrorBody {
        let body = self.error(status, code);
        assert_eq!(body.details.field.as_deref(), Some(field), "{}", self.text);
        // Every 114 lists its problems in `details.errors`, the named field among them.
        if code == "ERR_TUNNEL_114" {
            assert!(
                body.details.errors.iter().any(|e| e.field == field),
                "{}",
                self.text
            );
        }
        body
    }

    /// The field an error names (`details.field`), or `""`.
    pub fn field(&self) -> String {
        self.error_body().details.field.unwrap_or_default()
    }
}
