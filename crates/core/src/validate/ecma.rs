//! ECMA-262 regular expressions with the `u` flag, as a JS author means them, for `pattern`,
//! `patternProperties` and the `regex` format.
//!
//! Two engines, each for what it does well:
//!
//! - `regress`, an ECMAScript regular-expression engine, decides the syntax: a pattern is accepted
//!   exactly when `new RegExp(pattern, "u")` accepts it (`(?i)abc` is refused, `[^]` and named
//!   back-references `(?<n>a)\k<n>` are accepted). `regress` has no bound on backtracking, so it
//!   never runs a match here.
//! - `fancy-regex`, a backtracking engine with a step limit, runs the match on a translation of the
//!   pattern written out in its own syntax, construct by construct, with ECMAScript's meaning:
//!   `\d`, `\w`, `\b` and `\B` are ASCII, `\s` and `.` use ECMAScript's whitespace and line
//!   terminators, `[^]` is any character, a back-reference to a group that has not matched matches
//!   the empty string, `\uD83D\uDE00` is one code point.
//!
//! Where the two engines cannot agree, the pattern is refused with a message rather than run with
//! another meaning: modifier groups (`(?i:…)`), a back-reference to a group inside a repeated
//! group (ECMAScript clears it at each repetition) and back-references in or to a look-behind
//! (ECMAScript matches those right to left). The differential test against JS `RegExp`
//! (`__test__/validation-regex.test.ts`) holds the two together.

use std::collections::HashMap;
use std::fmt::Write;

use serde_json::{Map, Value};

use super::Issue;

/// The most backtracking steps one match may take: past it the string is refused with a message
/// naming the limit, so a catastrophic pattern costs milliseconds, not seconds.
pub const MAX_REGEX_BACKTRACKS: usize = 100_000;

/// The ECMAScript `WhiteSpace` and `LineTerminator` code points (`\s`), as inclusive ranges.
const WHITESPACE: [(u32, u32); 10] = [
    (0x09, 0x0d),
    (0x20, 0x20),
    (0xa0, 0xa0),
    (0x1680, 0x1680),
    (0x2000, 0x200a),
    (0x2028, 0x2029),
    (0x202f, 0x202f),
    (0x205f, 0x205f),
    (0x3000, 0x3000),
    (0xfeff, 0xfeff),
];
const DIGIT: [(u32, u32); 1] = [(0x30, 0x39)];
const WORD: [(u32, u32); 4] = [(0x30, 0x39), (0x41, 0x5a), (0x5f, 0x5f), (0x61, 0x7a)];
const WORD_CLASS: &str = "[0-9A-Z_a-z]";

/// A compiled pattern: the source as written and the bounded matcher of its translation.
pub struct EcmaRegex {
    regex: fancy_regex::Regex,
}

/// A match that could not be decided within [`MAX_REGEX_BACKTRACKS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitExceeded;

impl EcmaRegex {
    /// Whether the pattern matches somewhere in `text` (ECMAScript `RegExp.prototype.test`).
    pub fn is_match(&self, text: &str) -> Result<bool, LimitExceeded> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.regex.is_match(text)))
            .map_err(|_| LimitExceeded)?
            .map_err(|_| LimitExceeded)
    }
}

/// Compiles an ECMAScript pattern (`u` flag); the error says why it is refused.
pub fn compile(pattern: &str) -> Result<EcmaRegex, String> {
    let translated = translate(pattern)?;
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        fancy_regex::RegexBuilder::new(&translated)
            .backtrack_limit(MAX_REGEX_BACKTRACKS)
            .build()
    }));
    match built {
        Ok(Ok(regex)) => Ok(EcmaRegex { regex }),
        Ok(Err(e)) => Err(format!(
            "it cannot be compiled within the engine's limits ({})",
            super::messages::clip(&e.to_string(), 160)
        )),
        Err(_) => Err("it cannot be compiled".to_owned()),
    }
}

/// The pattern rewritten in `fancy-regex` syntax with its ECMAScript (`u` flag) meaning, or why it
/// is refused. Every pattern `new RegExp(pattern, "u")` refuses is refused.
pub fn translate(pattern: &str) -> Result<String, String> {
    if let Err(e) = regress::Regex::with_flags(pattern, "u") {
        return Err(format!(
            "it is not a valid ECMAScript regular expression with the u flag ({})",
            super::messages::clip(&e.to_string(), 120)
        ));
    }
    let chars: Vec<char> = pattern.chars().collect();
    // Pass one learns the capture groups (a back-reference may name a later group).
    let mut first = Translator::new(&chars, HashMap::new());
    first.disjunction()?;
    let names = first.names.clone();
    let mut second = Translator::new(&chars, names);
    second.disjunction()?;
    if second.pos != chars.len() {
        return Err("it has an unmatched \")\"".to_owned());
    }
    second.check_backreferences()?;
    Ok(second.out)
}

struct Group {
    repeated: bool,
    in_lookbehind: bool,
}

struct Translator<'a> {
    chars: &'a [char],
    pos: usize,
    out: String,
    groups: Vec<Group>,
    names: HashMap<String, usize>,
    /// Each back-reference: its group number and whether it sits in a look-behind.
    backrefs: Vec<(usize, bool)>,
    lookbehind: usize,
}

fn unsupported(what: &str) -> String {
    format!("it uses {what}, which this validator does not support")
}

impl<'a> Translator<'a> {
    fn new(chars: &'a [char], names: HashMap<String, usize>) -> Self {
        Translator {
            chars,
            pos: 0,
            out: String::new(),
            groups: Vec::new(),
            names,
            backrefs: Vec::new(),
            lookbehind: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }
    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }
    fn next(&mut self) -> Result<char, String> {
        let c = self.peek().ok_or("it ends too early")?;
        self.pos += 1;
        Ok(c)
    }

    fn disjunction(&mut self) -> Result<(), String> {
        loop {
            self.alternative()?;
            if self.eat('|') {
                self.out.push('|');
            } else {
                return Ok(());
            }
        }
    }

    fn alternative(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek() {
            match c {
                '|' | ')' => return Ok(()),
                _ => self.term()?,
            }
        }
        Ok(())
    }

    fn term(&mut self) -> Result<(), String> {
        let c = self.peek().ok_or("it ends too early")?;
        let groups_before = self.groups.len();
        match c {
            '^' => {
                self.pos += 1;
                self.out.push('^');
                return Ok(());
            }
            '$' => {
                self.pos += 1;
                self.out.push('$');
                return Ok(());
            }
            '\\' if matches!(self.peek_at(1), Some('b' | 'B')) => {
                let inverted = self.peek_at(1) == Some('B');
                self.pos += 2;
                self.out.push_str(&word_boundary(inverted));
                return Ok(());
            }
            '(' if self.starts_with("(?=")
                || self.starts_with("(?!")
                || self.starts_with("(?<=")
                || self.starts_with("(?<!") =>
            {
                let behind = self.peek_at(2) == Some('<');
                let head: String = self.chars[self.pos..self.pos + if behind { 4 } else { 3 }]
                    .iter()
                    .collect();
                self.pos += head.chars().count();
                self.out.push_str(&head);
                if behind {
                    self.lookbehind += 1;
                }
                self.disjunction()?;
                if behind {
                    self.lookbehind -= 1;
                }
                if !self.eat(')') {
                    return Err("it has an unclosed group".to_owned());
                }
                self.out.push(')');
                // Annex B allows a quantified look-ahead only without the u flag; regress has
                // refused it already, so nothing follows here.
                return Ok(());
            }
            _ => self.atom()?,
        }
        self.quantifier(groups_before)
    }

    fn quantifier(&mut self, groups_before: usize) -> Result<(), String> {
        let max: Option<u64> = match self.peek() {
            Some(c @ ('*' | '+')) => {
                self.pos += 1;
                self.out.push(c);
                None
            }
            Some('?') => {
                self.pos += 1;
                self.out.push('?');
                Some(1)
            }
            Some('{') => {
                let start = self.pos;
                self.pos += 1;
                let min = self.digits();
                let max = if self.eat(',') {
                    if self.peek() == Some('}') {
                        None
                    } else {
                        Some(self.digits().ok_or("it has a malformed quantifier")?)
                    }
                } else {
                    min
                };
                if min.is_none() || !self.eat('}') {
                    return Err("it has a malformed quantifier".to_owned());
                }
                let text: String = self.chars[start..self.pos].iter().collect();
                self.out.push_str(&text);
                max
            }
            _ => return Ok(()),
        };
        if self.eat('?') {
            self.out.push('?');
        }
        if max.is_none_or(|m| m > 1) {
            for g in &mut self.groups[groups_before..] {
                g.repeated = true;
            }
        }
        Ok(())
    }

    fn digits(&mut self) -> Option<u64> {
        let start = self.pos;
        let mut n: u64 = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            n = n.saturating_mul(10).saturating_add(u64::from(d));
            self.pos += 1;
        }
        (self.pos > start).then_some(n)
    }

    fn atom(&mut self) -> Result<(), String> {
        let c = self.next()?;
        match c {
            '.' => self.out.push_str(r"[^\n\r\u2028\u2029]"),
            '[' => self.class()?,
            '(' => {
                if self.eat('?') {
                    if self.eat(':') {
                        self.out.push_str("(?:");
                    } else if self.peek() == Some('<') {
                        self.pos += 1;
                        let name = self.group_name()?;
                        let index = self.groups.len() + 1;
                        self.names.entry(name).or_insert(index);
                        self.open_group();
                    } else {
                        return Err(unsupported("a modifier group such as (?i:…)"));
                    }
                } else {
                    self.open_group();
                }
                self.disjunction()?;
                if !self.eat(')') {
                    return Err("it has an unclosed group".to_owned());
                }
                self.out.push(')');
            }
            '\\' => self.atom_escape()?,
            _ => push_literal(&mut self.out, c as u32, false),
        }
        Ok(())
    }

    fn open_group(&mut self) {
        self.groups.push(Group {
            repeated: false,
            in_lookbehind: self.lookbehind > 0,
        });
        self.out.push('(');
    }

    fn group_name(&mut self) -> Result<String, String> {
        let mut name = String::new();
        loop {
            match self.next()? {
                '>' => return Ok(name),
                '\\' => {
                    // `\uXXXX` or `\u{…}` in a group name.
                    if self.next()? != 'u' {
                        return Err("it has a malformed group name".to_owned());
                    }
                    let cp = self.unicode_escape_value()?;
                    name.push(char::from_u32(cp).ok_or("it has a malformed group name")?);
                }
                c => name.push(c),
            }
        }
    }

    fn atom_escape(&mut self) -> Result<(), String> {
        let c = self.peek().ok_or("it ends with a lone backslash")?;
        match c {
            '1'..='9' => {
                let n = self.digits().unwrap_or(0);
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                self.backreference(n);
            }
            'k' => {
                self.pos += 1;
                if !self.eat('<') {
                    return Err("it has a malformed named back-reference".to_owned());
                }
                let name = self.group_name()?;
                let n = self.names.get(&name).copied().unwrap_or(0);
                self.backreference(n);
            }
            'd' | 'D' | 's' | 'S' | 'w' | 'W' | 'p' | 'P' => {
                let class = self.class_escape()?;
                self.out.push_str(&class.as_atom());
            }
            _ => {
                let cp = self.character_escape()?;
                push_literal(&mut self.out, cp, false);
            }
        }
        Ok(())
    }

    /// ECMAScript: a back-reference to a group that has not matched matches the empty string.
    fn backreference(&mut self, n: usize) {
        self.backrefs.push((n, self.lookbehind > 0));
        let _ = write!(self.out, "(?:(?({n})\\{n}|))");
    }

    fn check_backreferences(&self) -> Result<(), String> {
        for &(n, in_lookbehind) in &self.backrefs {
            let Some(group) = n.checked_sub(1).and_then(|i| self.groups.get(i)) else {
                return Err("it has a back-reference to a group that does not exist".to_owned());
            };
            if in_lookbehind || group.in_lookbehind {
                return Err(unsupported("a back-reference in or to a look-behind"));
            }
            if group.repeated {
                return Err(unsupported(
                    "a back-reference to a group inside a repeated group",
                ));
            }
        }
        Ok(())
    }

    /// A character escape after `\`: its code point.
    fn character_escape(&mut self) -> Result<u32, String> {
        let c = self.next()?;
        Ok(match c {
            'f' => 0x0c,
            'n' => 0x0a,
            'r' => 0x0d,
            't' => 0x09,
            'v' => 0x0b,
            'c' => {
                let letter = self.next()?;
                if !letter.is_ascii_alphabetic() {
                    return Err("it has a malformed \\c escape".to_owned());
                }
                (letter as u32) % 32
            }
            '0' => 0,
            'x' => {
                let hi = self.hex_digit()?;
                let lo = self.hex_digit()?;
                hi * 16 + lo
            }
            'u' => self.unicode_escape_value()?,
            other if other.is_ascii_alphanumeric() => {
                return Err(format!("it has an unknown escape \\{other}"))
            }
            other => other as u32,
        })
    }

    fn hex_digit(&mut self) -> Result<u32, String> {
        self.next()?
            .to_digit(16)
            .ok_or_else(|| "it has a malformed hexadecimal escape".to_owned())
    }

    /// After `\u`: `XXXX` (a surrogate pair written as two escapes is one code point) or `{…}`.
    fn unicode_escape_value(&mut self) -> Result<u32, String> {
        if self.eat('{') {
            let mut cp: u32 = 0;
            while !self.eat('}') {
                cp = cp.saturating_mul(16).saturating_add(self.hex_digit()?);
            }
            return Ok(cp);
        }
        let mut cp = 0;
        for _ in 0..4 {
            cp = cp * 16 + self.hex_digit()?;
        }
        if (0xd800..0xdc00).contains(&cp) && self.starts_with("\\u") {
            let save = self.pos;
            self.pos += 2;
            let mut low = 0;
            let mut ok = true;
            for _ in 0..4 {
                match self.peek().and_then(|c| c.to_digit(16)) {
                    Some(d) => {
                        low = low * 16 + d;
                        self.pos += 1;
                    }
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok && (0xdc00..0xe000).contains(&low) {
                return Ok(0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00));
            }
            self.pos = save;
        }
        Ok(cp)
    }

    /// After `\`: `d D s S w W p{…} P{…}`.
    fn class_escape(&mut self) -> Result<ClassPart, String> {
        let c = self.next()?;
        Ok(match c {
            'd' => ClassPart::Ranges(DIGIT.to_vec(), false),
            'D' => ClassPart::Ranges(DIGIT.to_vec(), true),
            's' => ClassPart::Ranges(WHITESPACE.to_vec(), false),
            'S' => ClassPart::Ranges(WHITESPACE.to_vec(), true),
            'w' => ClassPart::Ranges(WORD.to_vec(), false),
            'W' => ClassPart::Ranges(WORD.to_vec(), true),
            'p' | 'P' => {
                if !self.eat('{') {
                    return Err("it has a malformed property escape".to_owned());
                }
                let mut name = String::new();
                loop {
                    match self.next()? {
                        '}' => break,
                        ch if ch.is_ascii_alphanumeric() || ch == '_' || ch == '=' => name.push(ch),
                        _ => return Err("it has a malformed property escape".to_owned()),
                    }
                }
                ClassPart::Property(name, c == 'P')
            }
            _ => return Err("it has a malformed class escape".to_owned()),
        })
    }

    /// After `[`: a class, written out with explicit ranges.
    fn class(&mut self) -> Result<(), String> {
        let negated = self.eat('^');
        let mut parts: Vec<ClassPart> = Vec::new();
        loop {
            let c = self.peek().ok_or("it has an unclosed character class")?;
            if c == ']' {
                self.pos += 1;
                break;
            }
            let first = self.class_atom()?;
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|n| n != ']') {
                self.pos += 1;
                let last = self.class_atom()?;
                match (first, last) {
                    (ClassPart::Char(a), ClassPart::Char(b)) if a <= b => {
                        parts.push(ClassPart::Ranges(vec![(a, b)], false));
                    }
                    _ => return Err("it has a malformed character range".to_owned()),
                }
            } else {
                parts.push(first);
            }
        }
        self.out.push_str(&class_text(&parts, negated));
        Ok(())
    }

    fn class_atom(&mut self) -> Result<ClassPart, String> {
        let c = self.next()?;
        if c != '\\' {
            return Ok(ClassPart::Char(c as u32));
        }
        match self.peek().ok_or("it has an unclosed character class")? {
            'b' => {
                self.pos += 1;
                Ok(ClassPart::Char(0x08))
            }
            '-' => {
                self.pos += 1;
                Ok(ClassPart::Char('-' as u32))
            }
            'd' | 'D' | 's' | 'S' | 'w' | 'W' | 'p' | 'P' => self.class_escape(),
            _ => Ok(ClassPart::Char(self.character_escape()?)),
        }
    }
}

/// One member of a character class.
enum ClassPart {
    Char(u32),
    /// Inclusive ranges, complemented when `true`.
    Ranges(Vec<(u32, u32)>, bool),
    /// `\p{…}` (or `\P{…}` when `true`), passed on by name.
    Property(String, bool),
}

impl ClassPart {
    fn as_atom(&self) -> String {
        class_text(std::slice::from_ref(self), false)
    }
}

/// The complement of sorted, disjoint ranges within the code points.
fn complement(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut next = 0u32;
    for &(a, b) in ranges {
        if a > next {
            out.push((next, a - 1));
        }
        next = b + 1;
    }
    if next <= 0x10ffff {
        out.push((next, 0x10ffff));
    }
    out
}

fn class_text(parts: &[ClassPart], negated: bool) -> String {
    let mut body = String::new();
    for part in parts {
        match part {
            ClassPart::Char(c) => push_range(&mut body, *c, *c),
            ClassPart::Ranges(ranges, complemented) => {
                let ranges = if *complemented {
                    complement(ranges)
                } else {
                    ranges.clone()
                };
                for (a, b) in ranges {
                    push_range(&mut body, a, b);
                }
            }
            ClassPart::Property(name, inverted) => {
                let _ = write!(body, "\\{}{{{name}}}", if *inverted { 'P' } else { 'p' });
            }
        }
    }
    match (body.is_empty(), negated) {
        // `[]` matches nothing, `[^]` any character.
        (true, false) => r"[^\u0000-\u{10FFFF}]".to_owned(),
        (true, true) => r"[\u0000-\u{10FFFF}]".to_owned(),
        (false, false) => format!("[{body}]"),
        (false, true) => format!("[^{body}]"),
    }
}

/// A class range, without the surrogate code points (no Rust string holds one, so they match
/// nothing either way).
fn push_range(out: &mut String, a: u32, b: u32) {
    let mut pieces = vec![(a, b)];
    if a <= 0xdfff && b >= 0xd800 {
        pieces.clear();
        if a < 0xd800 {
            pieces.push((a, 0xd7ff));
        }
        if b > 0xdfff {
            pieces.push((0xe000, b));
        }
    }
    for (a, b) in pieces {
        push_literal(out, a, true);
        if b != a {
            out.push('-');
            push_literal(out, b, true);
        }
    }
}

/// `\b` (or `\B`) with ECMAScript's ASCII word characters.
fn word_boundary(inverted: bool) -> String {
    let w = WORD_CLASS;
    if inverted {
        format!("(?:(?<={w})(?={w})|(?<!{w})(?!{w}))")
    } else {
        format!("(?:(?<={w})(?!{w})|(?<!{w})(?={w}))")
    }
}

/// One code point as a literal, written so that both ECMAScript (`u` flag) and Rust read it as
/// that character (a rewritten `patternProperties` key must stay a valid ECMAScript pattern for the
/// meta-schema): ASCII letters and digits as they are, syntax escaped with `\\`, `&`, `~` and `-`
/// in a class as `\\u…` (Rust's set operators), other printable characters as they are, the rest
/// as `\\u…`. A lone surrogate (from `\\uD800`) can never occur in a Rust string: it matches nothing.
fn push_literal(out: &mut String, cp: u32, in_class: bool) {
    let Some(c) = char::from_u32(cp) else {
        if !in_class {
            out.push_str(r"[^\u0000-\u{10FFFF}]");
        }
        return;
    };
    let syntax = matches!(
        c,
        '\\' | '.' | '+' | '*' | '?' | '(' | ')' | '|' | '[' | ']' | '{' | '}' | '^' | '$' | '/'
    );
    if c.is_ascii_alphanumeric() || c == '_' {
        out.push(c);
    } else if syntax || (in_class && c == '-') {
        out.push('\\');
        out.push(c);
    } else if in_class && matches!(c, '&' | '~') {
        let _ = write!(out, "\\u{cp:04X}");
    } else if c.is_ascii_graphic() || (!c.is_ascii() && !c.is_control() && !c.is_whitespace()) {
        out.push(c);
    } else if cp <= 0xffff {
        let _ = write!(out, "\\u{cp:04X}");
    } else {
        let _ = write!(out, "\\u{{{cp:X}}}");
    }
}

/// Keywords whose value is plain data, or a reference: nothing below them is a schema.
const DATA_KEYWORDS: [&str; 9] = [
    "enum",
    "const",
    "default",
    "examples",
    "required",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "dependentRequired",
];
/// Keywords whose value maps names to subschemas.
const NAME_MAPS: [&str; 5] = [
    "properties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// Rewrites every `patternProperties` key into its translation, so the validator's own
/// `patternProperties`, `additionalProperties` and `unevaluatedProperties` all match with the
/// ECMAScript meaning. Returns whether any key changed, or the issue of a key that is refused.
pub fn rewrite_pattern_properties(schema: &mut Value) -> Result<bool, Issue> {
    let mut changed = false;
    if !mentions_pattern_properties(schema) {
        return Ok(false);
    }
    let mut at = String::new();
    walk(schema, &mut at, &mut changed)?;
    Ok(changed)
}

/// Whether any object in `schema` has a `patternProperties` key: most schemas have none, and the
/// rewriting walk builds a pointer for every key it passes.
fn mentions_pattern_properties(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k == "patternProperties" || mentions_pattern_properties(v)),
        Value::Array(list) => list.iter().any(mentions_pattern_properties),
        _ => false,
    }
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn walk(value: &mut Value, at: &mut String, changed: &mut bool) -> Result<(), Issue> {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if DATA_KEYWORDS.contains(&key.as_str()) {
                    continue;
                }
                let len = at.len();
                at.push('/');
                at.push_str(&escape_pointer(key));
                if key == "patternProperties" {
                    if let Value::Object(patterns) = child {
                        *patterns = rewrite_keys(std::mem::take(patterns), at, changed)?;
                    }
                }
                if (NAME_MAPS.contains(&key.as_str()) || key == "patternProperties")
                    && child.is_object()
                {
                    if let Value::Object(members) = child {
                        for (name, sub) in members.iter_mut() {
                            let len = at.len();
                            at.push('/');
                            at.push_str(&escape_pointer(name));
                            walk(sub, at, changed)?;
                            at.truncate(len);
                        }
                    }
                } else {
                    walk(child, at, changed)?;
                }
                at.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = at.len();
                let _ = write!(at, "/{i}");
                walk(item, at, changed)?;
                at.truncate(len);
            }
        }
        _ => {}
    }
    Ok(())
}

fn rewrite_keys(
    patterns: Map<String, Value>,
    at: &str,
    changed: &mut bool,
) -> Result<Map<String, Value>, Issue> {
    let mut out = Map::new();
    for (key, sub) in patterns {
        let refuse = |why: String| {
            Issue::whole(format!(
                "schema keyword \"patternProperties\" at #{at} has a pattern {} that is refused: {why}",
                super::messages::clip(&Value::String(key.clone()).to_string(), 80)
            ))
        };
        compile(&key).map_err(&refuse)?;
        let mut translated = translate(&key).map_err(&refuse)?;
        // The key passes through the validator's own pattern translation, which must leave it
        // as it is: else the key would be matched with yet another meaning.
        if jsonschema_regex::to_rust_regex(&translated).ok().as_deref() != Some(&translated) {
            return Err(refuse(unsupported(
                "a back-reference or a construct that patternProperties cannot carry",
            )));
        }
        if regress::Regex::with_flags(&translated, "u").is_err() {
            return Err(refuse(unsupported(
                "a back-reference or a construct that patternProperties cannot carry",
            )));
        }
        while out.contains_key(&translated) {
            translated.push_str("(?:)");
        }
        if translated != key {
            *changed = true;
        }
        out.insert(translated, sub);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(pattern: &str, text: &str) -> bool {
        compile(pattern).unwrap().is_match(text).unwrap()
    }

    #[test]
    fn follows_ecmascript_where_rust_syntax_leaked_through() {
        assert!(compile("(?i)abc").is_err());
        assert!(!test(r"\bé", "é"));
        assert!(test(r"\bé", "aé"));
        assert!(test(r"^[^]$", "\n"));
        assert!(!test(r"^[]$", ""));
        assert!(test(r"^(?<n>a)\k<n>$", "aa"));
        assert!(!test(r"^(?<n>a)\k<n>$", "ab"));
        assert!(test(r"^\1(a)$", "a"));
        assert!(test(r"^(a)?\1b$", "b"));
        assert!(!test(r"^\d$", "٣"));
        assert!(test(r"^\s$", "\u{feff}"));
        assert!(!test(r"^.$", "\u{2028}"));
        assert!(test(r"^\uD83D\uDE00$", "😀"));
        assert!(test(r"^\u{1F600}$", "😀"));
        assert!(test(r"^[\w-]+$", "a-b_c"));
        assert!(test(r"^[^\D]$", "5"));
        assert!(test(r"^\p{Lu}+$", "ÀB"));
        assert!(test(r"^a&&b~~c--d#e$", "a&&b~~c--d#e"));
        assert!(test(r"^[&&~~]+$", "&~"));
        assert!(test(r"^\cJ\0\x41$", "\n\0A"));
    }

    #[test]
    fn translations_are_valid_ecmascript_too() {
        for p in [
            ".",
            "[^]",
            "[]",
            "^[&~#-]+$",
            "a&b~c#d-e",
            "\\u0000\\t",
            "\\u{1F600}",
            "\\d\\W\\s",
            "\\b",
            "x/y",
        ] {
            let t = translate(p).unwrap();
            assert!(regress::Regex::with_flags(&t, "u").is_ok(), "{p} -> {t}");
            assert_eq!(
                jsonschema_regex::to_rust_regex(&t).ok().as_deref(),
                Some(t.as_str()),
                "{p}"
            );
        }
    }

    #[test]
    fn refuses_what_the_engines_cannot_agree_on() {
        for p in [
            r"(?:(a)|b)+\1",
            r"(?<=(a))\1",
            r"(?<=\1(a))b",
            "(?i:a)",
            r"\2(a)",
        ] {
            let e = compile(p).err().unwrap_or_default();
            assert!(!e.is_empty(), "{p} was accepted");
        }
        for p in ["a{", r"\-", "[z-a]", "(", ")", r"\k<x>", "[", r"\c1"] {
            let e = compile(p).err().unwrap_or_default();
            assert!(e.contains("not a valid ECMAScript"), "{p}: {e}");
        }
    }

    #[test]
    fn a_catastrophic_pattern_stops_at_the_limit() {
        let text = format!("{}!", "a".repeat(5000));
        // Regular patterns run on the linear engine: no backtracking at all.
        assert_eq!(compile("^(a+)+$").unwrap().is_match(&text), Ok(false));
        assert_eq!(compile("^(a|aa)+$").unwrap().is_match(&text), Ok(false));
        // A look-around keeps the backtracking engine: stopped at the step limit.
        let re = compile("^(?:(?=a)a+)+$").unwrap();
        assert_eq!(re.is_match(&text), Err(LimitExceeded));
        assert_eq!(re.is_match("aaa"), Ok(true));
    }
}
