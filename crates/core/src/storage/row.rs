//! One row mapping for both databases: a component lists a row's columns once as [`Value`]s, which
//! SQLite and PostgreSQL both bind, and reads a row back once through [`Columns`], which both rows
//! implement. Errors are the database's words; the component says which store failed.

use std::error::Error;

use bytes::BytesMut;
use postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use rusqlite::types::ToSqlOutput;

/// One bound column value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Text(Option<&'a str>),
    /// Bound as `bigint`, or as `integer` where the column is one (checked to fit).
    Int(Option<i64>),
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(v: &'a str) -> Self {
        Value::Text(Some(v))
    }
}
impl<'a> From<&'a String> for Value<'a> {
    fn from(v: &'a String) -> Self {
        Value::Text(Some(v))
    }
}
impl<'a> From<Option<&'a str>> for Value<'a> {
    fn from(v: Option<&'a str>) -> Self {
        Value::Text(v)
    }
}
impl<'a> From<&'a Option<String>> for Value<'a> {
    fn from(v: &'a Option<String>) -> Self {
        Value::Text(v.as_deref())
    }
}
impl From<i64> for Value<'_> {
    fn from(v: i64) -> Self {
        Value::Int(Some(v))
    }
}
impl From<Option<i64>> for Value<'_> {
    fn from(v: Option<i64>) -> Self {
        Value::Int(v)
    }
}

impl rusqlite::ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match self {
            Value::Text(v) => rusqlite::ToSql::to_sql(v),
            Value::Int(v) => rusqlite::ToSql::to_sql(v),
        }
    }
}

impl ToSql for Value<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match *self {
            Value::Text(v) if <&str as ToSql>::accepts(ty) => v.to_sql(ty, out),
            Value::Int(v) if *ty == Type::INT4 => v.map(i32::try_from).transpose()?.to_sql(ty, out),
            Value::Int(v) if *ty == Type::INT8 => v.to_sql(ty, out),
            _ => Err(format!("a {self:?} cannot be stored in a {ty} column").into()),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <&str as ToSql>::accepts(ty) || *ty == Type::INT4 || *ty == Type::INT8
    }

    to_sql_checked!();
}

/// Values as PostgreSQL's parameter list.
pub fn pg_params<'a>(values: &'a [Value<'_>]) -> Vec<&'a (dyn ToSql + Sync)> {
    values.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}

/// A row read back by column index; a missing or mistyped column (a table altered by hand) is an
/// error in the database's words, never a panic.
pub trait Columns {
    fn opt_text(&self, i: usize) -> Result<Option<String>, String>;
    fn opt_int(&self, i: usize) -> Result<Option<i64>, String>;

    fn text(&self, i: usize) -> Result<String, String> {
        self.opt_text(i)?.ok_or_else(|| null(i))
    }
    fn int(&self, i: usize) -> Result<i64, String> {
        self.opt_int(i)?.ok_or_else(|| null(i))
    }
}

fn null(i: usize) -> String {
    format!("column {i} is null")
}

impl Columns for rusqlite::Row<'_> {
    fn opt_text(&self, i: usize) -> Result<Option<String>, String> {
        self.get(i).map_err(|e| e.to_string())
    }
    fn opt_int(&self, i: usize) -> Result<Option<i64>, String> {
        self.get(i).map_err(|e| e.to_string())
    }
}

impl Columns for postgres::Row {
    fn opt_text(&self, i: usize) -> Result<Option<String>, String> {
        self.try_get(i).map_err(|e| e.to_string())
    }
    fn opt_int(&self, i: usize) -> Result<Option<i64>, String> {
        match self.columns().get(i).map(|c| c.type_()) {
            Some(&Type::INT4) => self
                .try_get::<_, Option<i32>>(i)
                .map(|v| v.map(i64::from))
                .map_err(|e| e.to_string()),
            _ => self.try_get(i).map_err(|e| e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_binds_and_reads_back_every_value() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (a TEXT, b TEXT, c INTEGER, d INTEGER)")
            .unwrap();
        let values = [
            Value::from("x"),
            Value::Text(None),
            Value::from(-7i64),
            Value::Int(None),
        ];
        conn.execute(
            "INSERT INTO t VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params_from_iter(values.iter()),
        )
        .unwrap();
        let read = conn
            .query_row("SELECT a, b, c, d FROM t", [], |r| {
                Ok((
                    r.text(0),
                    r.opt_text(1),
                    r.int(2),
                    r.opt_int(3),
                    r.text(1),
                    r.int(0),
                ))
            })
            .unwrap();
        assert_eq!(read.0, Ok("x".into()));
        assert_eq!(read.1, Ok(None));
        assert_eq!(read.2, Ok(-7));
        assert_eq!(read.3, Ok(None));
        assert_eq!(read.4, Err("column 1 is null".into()));
        assert!(read.5.is_err());
    }

    #[test]
    fn postgres_binding_checks_the_column_type() {
        let mut out = BytesMut::new();
        assert!(Value::Int(Some(1 << 40))
            .to_sql(&Type::INT4, &mut out)
            .is_err());
        assert!(Value::Int(Some(5)).to_sql(&Type::INT4, &mut out).is_ok());
        assert!(Value::from("x").to_sql(&Type::INT8, &mut out).is_err());
        assert!(Value::Int(Some(5)).to_sql(&Type::TEXT, &mut out).is_err());
        assert!(Value::from("x").to_sql(&Type::TEXT, &mut out).is_ok());
    }
}
