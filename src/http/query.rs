//! A request's query parameters, decoded strictly: a parameter that is not UTF-8 once its
//! `%XX` escapes are undone is an error naming it, not text with replacement characters.

use percent_encoding::percent_decode;

/// Why a query parameter could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error("missing query parameter {0:?}")]
    Missing(&'static str),
    #[error("query parameter {0:?} is not UTF-8 text")]
    NotUtf8(&'static str),
}

/// The value of `name` in the query `query` (`a=1&fen=B%3AW18%3AB14`), `+` as a space.
pub fn query_param(query: Option<&str>, name: &'static str) -> Result<String, QueryError> {
    let query = query.unwrap_or("");
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key != name {
            continue;
        }
        let spaced = value.replace('+', " ");
        return percent_decode(spaced.as_bytes())
            .decode_utf8()
            .map(|v| v.into_owned())
            .map_err(|_| QueryError::NotUtf8(name));
    }
    Err(QueryError::Missing(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_decoded_and_bad_bytes_named() {
        let q = Some("x=1&fen=B%3AW18%2CK12%3AB3+5");
        assert_eq!(query_param(q, "fen").unwrap(), "B:W18,K12:B3 5");
        assert_eq!(query_param(q, "y"), Err(QueryError::Missing("y")));
        assert_eq!(query_param(None, "fen"), Err(QueryError::Missing("fen")));
        assert_eq!(
            query_param(Some("fen=%FF%FE"), "fen"),
            Err(QueryError::NotUtf8("fen"))
        );
    }
}
