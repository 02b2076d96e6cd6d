//! The inspector's errors: [`InspectError`] when the server cannot start,
//! and [`ApiError`], the answer to a request that cannot be served.
//!
//! Every request the server cannot serve gets an [`ApiError`]: an HTTP
//! status (4xx for the client's mistakes, 5xx for the server's) and a
//! message, sent as `{"error": message, "status": code}`, with `"column"`
//! added when the error points into text the client wrote (a query
//! expression, see [`crate::qlang`]). Nothing a client sends leads to a
//! panic; parsers and handlers return these instead.

use serde_json::json;

/// Why the inspector could not start.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// The address could not be parsed.
    #[error("invalid inspector address \"{0}\": expected HOST:PORT or PORT, e.g. 127.0.0.1:8080")]
    BadAddress(String),
    /// The server could not bind.
    #[error("cannot serve the inspector on {addr}: {message}")]
    Bind {
        /// The address asked for.
        addr: String,
        /// What the operating system said.
        message: String,
    },
    /// A server thread could not be started.
    #[error("cannot start an inspector thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// A request the inspector cannot serve, with its HTTP status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status}: {message}")]
pub struct ApiError {
    /// The HTTP status code.
    pub status: u16,
    /// What went wrong, for people.
    pub message: String,
    /// The 1-based column (in characters) of the client's text the error
    /// points at, for errors in a query expression.
    pub column: Option<usize>,
}

impl ApiError {
    /// An error with `status` and `message`.
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            column: None,
        }
    }

    /// The error pointing at `column` of the client's text.
    pub fn with_column(mut self, column: usize) -> Self {
        self.column = Some(column);
        self
    }

    /// 400: the request is malformed.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, message)
    }

    /// 403: the request needs write access (`--inspect-write`) or came
    /// from another origin.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, message)
    }

    /// 404: nothing is there.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, message)
    }

    /// 405: the path exists, but not for this method.
    pub fn method_not_allowed(method: &str, path: &str) -> Self {
        Self::new(405, format!("{method} is not allowed on {path}"))
    }

    /// 413: the body or the URL is too long.
    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(413, message)
    }

    /// 422: well-formed, but the world refused it (a value of the wrong type).
    pub fn unprocessable(message: impl Into<String>) -> Self {
        Self::new(422, message)
    }

    /// 503: the simulation did not answer in time.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(503, message)
    }

    /// The JSON body: `{"error": message, "status": code}`, and
    /// `"column"` when the error has one.
    pub fn to_json(&self) -> serde_json::Value {
        let mut body = json!({ "error": self.message, "status": self.status });
        if let Some(column) = self.column {
            body["column"] = json!(column);
        }
        body
    }
}
