//! A small API client for setting up test data directly (not through the console) and for
//! checking what the console sent. The requests and responses: `docs/api/README.md`.

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// How many times a request refused by a rate limit is sent.
const RATE_LIMITED_TRIES: u32 = 10;

#[derive(Debug, Clone)]
pub struct Api {
    base: String,
    key: String,
    client: Client<HttpConnector, Full<Bytes>>,
}

impl Api {
    pub fn new(base: &str, key: &str) -> Api {
        Api {
            base: base.to_owned(),
            key: key.to_owned(),
            client: Client::builder(TokioExecutor::new()).build_http(),
        }
    }

    /// Sends one request; returns the status and the JSON body (`Null` when empty). A 429 is
    /// waited out and sent again, as a well-behaved script does (the server's default limits
    /// apply to the tests too, docs/rate-limits.md): a refused request was not carried out.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value)> {
        for _ in 0..RATE_LIMITED_TRIES {
            let (status, json) = self.call_once(method.clone(), path, body.clone()).await?;
            if status != 429 {
                return Ok((status, json));
            }
            let secs = json["details"]["retry_after_secs"].as_u64().unwrap_or(1);
            tokio::time::sleep(std::time::Duration::from_secs(secs.min(60))).await;
        }
        bail!("{method} {path}: still rate limited after {RATE_LIMITED_TRIES} tries")
    }

    /// One request, a 429 included (tests of the rate limits).
    pub async fn call_once(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value)> {
        let what = format!("calling the API: {method} {path}");
        let mut request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("Authorization", format!("Bearer {}", self.key))
            .header("Service-Version", "2");
        let body = match body {
            Some(json) => {
                request = request.header("Content-Type", "application/json");
                Full::new(Bytes::from(json.to_string()))
            }
            None => Full::new(Bytes::new()),
        };
        let response = self
            .client
            .request(request.body(body)?)
            .await
            .context(what)?;
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await?.to_bytes();
        let json = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)?
        };
        Ok((status, json))
    }

    /// GET: the status and the JSON body.
    pub async fn get(&self, path: &str) -> Result<(u16, Value)> {
        self.call(Method::GET, path, None).await
    }

    /// POST: the status and the JSON body (any status; the caller judges it).
    pub async fn post(&self, path: &str, body: Value) -> Result<(u16, Value)> {
        self.call(Method::POST, path, Some(body)).await
    }

    /// How many items the list page at `path` holds under its property `field` (`None` when
    /// the answer has no such list).
    pub async fn count(&self, path: &str, field: &str) -> Result<Option<usize>> {
        let (_, list) = self.get(path).await?;
        Ok(list[field].as_array().map(Vec::len))
    }

    /// The ids of the items of the list page at `path`, under its property `field`.
    pub async fn ids(&self, path: &str, field: &str) -> Result<Vec<String>> {
        let (_, list) = self.get(path).await?;
        Ok(list[field]
            .as_array()
            .into_iter()
            .flatten()
            .map(id)
            .collect())
    }

    /// The ids of the tunnel sessions online now (the first page, which holds every session
    /// a test starts).
    pub async fn session_ids(&self) -> Result<Vec<String>> {
        self.ids("/tunnel_sessions", "tunnel_sessions").await
    }

    /// Polls the sessions online (as [`crate::pages::eventually`]) until `pick` finds in their
    /// ids what the test waits for (`what` names it in the timeout's error).
    pub async fn wait_sessions<T>(
        &self,
        what: &str,
        pick: impl Fn(Vec<String>) -> Option<T>,
    ) -> Result<T> {
        crate::pages::eventually(what, || async { Ok(pick(self.session_ids().await?)) }).await
    }

    /// POST that must answer 201; returns the created resource.
    pub async fn create(&self, path: &str, body: Value) -> Result<Value> {
        let (status, json) = self.call(Method::POST, path, Some(body)).await?;
        if status != 201 {
            bail!("POST {path} answered {status}: {json}");
        }
        Ok(json)
    }
}

/// The `id` of a resource in JSON (empty when it has none, so the assertion after says what).
pub fn id(resource: &Value) -> String {
    resource["id"].as_str().unwrap_or_default().to_owned()
}
