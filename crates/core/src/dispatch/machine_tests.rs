use super::*;
use crate::filter::Filter;
use crate::redact::Secrets;
use std::rc::Rc;

fn call(name: &str) -> CallFacts {
    CallFacts {
        name: Some(name.to_owned()),
        name_is_string: true,
        provider_hosted: false,
        arguments: ArgumentsShape::Object,
    }
}

thread_local! {
    /// How the last driven dispatch ended.
    static LAST: std::cell::Cell<Option<Terminal>> = const { std::cell::Cell::new(None) };
    /// Which commands of the last driven dispatch the signal gated (their positions).
    static GATED: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs a dispatch to its end, answering each command with `host`; returns every command. The
/// signal is never aborted when a gated command is checked.
fn drive(setup: Setup, facts: CallFacts, host: impl FnMut(&Command) -> Answer) -> Vec<Command> {
    drive_with_signal(setup, facts, false, host)
}

/// As `drive`; with `aborted`, the first command the signal gates is answered `SignalAborted`
/// (the host found the caller's signal aborted and did not run it).
fn drive_with_signal(
    setup: Setup,
    facts: CallFacts,
    aborted: bool,
    mut host: impl FnMut(&Command) -> Answer,
) -> Vec<Command> {
    let mut d = Dispatch::new(setup, facts);
    let mut cmd = d.start();
    let mut seen = Vec::new();
    let mut gated = Vec::new();
    for _ in 0..200 {
        seen.push(cmd.clone());
        if matches!(cmd, Command::Resolve | Command::Reject(_)) {
            LAST.with(|l| l.set(d.terminal()));
            GATED.with(|g| *g.borrow_mut() = gated);
            return seen;
        }
        let a = if d.signal_gated() {
            gated.push(seen.len() - 1);
            if aborted {
                Answer::SignalAborted
            } else {
                host(&cmd)
            }
        } else {
            host(&cmd)
        };
        cmd = d.step(a);
    }
    panic!("dispatch did not end: {seen:?}");
}

/// The positions of the commands the signal gated in the last driven dispatch.
fn gated() -> Vec<usize> {
    GATED.with(|g| g.borrow().clone())
}

/// A host that gives `answer` to `command` and leaves every other command to `otherwise`.
fn answering(
    command: Command,
    answer: Answer,
    otherwise: fn(&Command) -> Answer,
) -> impl FnMut(&Command) -> Answer {
    move |c| {
        if *c == command {
            answer.clone()
        } else {
            otherwise(c)
        }
    }
}

/// A host where every hook agrees and the tool returns a result.
fn happy(c: &Command) -> Answer {
    match c {
        Command::CallMiddleware => Answer::Call(call("echo")),
        Command::Lookup => Answer::Found(true),
        Command::CheckTrust | Command::CheckPermission => Answer::Decision {
            granted: true,
            reason: None,
        },
        Command::Validate => Answer::Validated(Validation::Valid),
        Command::EffectDeclaration => Answer::EffectPlan {
            plan: None,
            idempotency_unsupported: false,
        },
        Command::Execute => Answer::Returned(ToolReturn::Result { has_error: false }),
        Command::GuardrailRecord { .. } => Answer::Done,
        Command::AwaitGuardrail { .. } => Answer::Guard(
            GuardDecision {
                action: GuardAction::Allow,
                reason: None,
                metadata: false,
            },
            GuardFacts::default(),
        ),
        Command::StartGuardrail { .. } => Answer::GuardStarted,
        Command::EffectBegin => Answer::Begun(Begun::Acquired {
            token: "t".into(),
            version: 1.0,
        }),
        Command::MarkDispatched(_) => Answer::Record { version: Some(2.0) },
        Command::EffectComplete(_) => Answer::Record { version: Some(3.0) },
        _ => Answer::Done,
    }
}

fn every_hook() -> Setup {
    Setup {
        middleware: true,
        input_guardrails: 1,
        output_guardrails: 1,
        guardrail_concurrency: 1,
        identity: true,
        trust: true,
        permission: true,
        validate: true,
        effect_store: true,
        before_execute: true,
        emit: true,
        ledger: true,
        signal: true,
        redaction: true,
        filter: None,
        secrets: Rc::new(Secrets::new(["sk-secret"])),
    }
}

/// The error the call ended with and its terminal kind.
fn ending(cmds: &[Command]) -> (Option<ErrorSpec>, Option<Terminal>) {
    let spec = cmds.iter().find_map(|c| {
        if let Command::SetError(s) = c {
            Some(s.clone())
        } else {
            None
        }
    });
    let kind = LAST.with(|l| l.get());
    if let Some(k) = cmds.iter().find_map(|c| {
        if let Command::EmitTerminal(k) | Command::AppendTerminal(k) = c {
            Some(*k)
        } else {
            None
        }
    }) {
        assert_eq!(Some(k), kind);
    }
    (spec, kind)
}

fn blocked(cmds: &[Command]) -> BlockedReason {
    match ending(cmds).1 {
        Some(Terminal::Blocked(r)) => r,
        other => panic!("not blocked: {other:?} in {cmds:?}"),
    }
}

fn message(cmds: &[Command]) -> String {
    match ending(cmds).0 {
        Some(ErrorSpec::Plain(m)) | Some(ErrorSpec::Named { message: m, .. }) => m,
        other => panic!("no message: {other:?}"),
    }
}

fn code(cmds: &[Command]) -> &'static str {
    match ending(cmds).0 {
        Some(ErrorSpec::Named { code, .. }) => code,
        other => panic!("no code: {other:?}"),
    }
}

#[test]
fn hook_free_dispatch_is_three_commands() {
    let setup = Setup {
        secrets: Rc::new(Secrets::default()),
        ..Setup::default()
    };
    let cmds = drive(setup, call("echo"), happy);
    assert_eq!(
        cmds,
        vec![
            Command::Lookup,
            Command::EffectDeclaration,
            Command::Execute,
            Command::Resolve
        ]
    );
}

#[test]
fn every_hook_runs_in_the_contracts_order() {
    let cmds = drive(every_hook(), call("echo"), |c| match c {
        Command::EffectDeclaration => Answer::EffectPlan {
            plan: Some(EffectPlan::ClaimRequired),
            idempotency_unsupported: false,
        },
        other => happy(other),
    });
    let gates = gated();
    let mut names: Vec<&str> = cmds
        .iter()
        .map(|c| match c {
            Command::CallMiddleware => "middleware",
            Command::StartGuardrail {
                stage: Stage::Input,
                ..
            } => "input-start",
            Command::AwaitGuardrail {
                stage: Stage::Input,
                ..
            } => "input-await",
            Command::GuardrailRecord {
                stage: Stage::Input,
                ..
            } => "input-record",
            Command::Lookup => "lookup",
            Command::CheckIdentity => "identity",
            Command::CheckTrust => "trust",
            Command::CheckPermission => "permission",
            Command::Validate => "validate",
            Command::EffectDeclaration => "declaration",
            Command::EffectKey => "key",
            Command::EffectBegin => "begin",
            Command::BeforeExecute => "before",
            Command::EmitStarted => "emit-started",
            Command::AppendStarted => "row-started",
            Command::MarkDispatched(_) => "mark-dispatched",
            Command::Execute => "execute",
            Command::ResultMiddleware => "result-middleware",
            Command::StartGuardrail {
                stage: Stage::Output,
                ..
            } => "output-start",
            Command::AwaitGuardrail {
                stage: Stage::Output,
                ..
            } => "output-await",
            Command::GuardrailRecord {
                stage: Stage::Output,
                ..
            } => "output-record",
            Command::RedactResult => "redact",
            Command::EffectComplete(_) => "complete",
            Command::EmitTerminal(Terminal::Finished) => "emit-finished",
            Command::AppendTerminal(Terminal::Finished) => "row-finished",
            Command::Resolve => "resolve",
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    // The signal check rides on the command it gates.
    assert_eq!(gates.len(), 1);
    names.insert(gates[0], "signal");
    assert_eq!(
        names,
        [
            "middleware",
            "input-start",
            "input-await",
            "input-record",
            "lookup",
            "identity",
            "trust",
            "permission",
            "validate",
            "declaration",
            "key",
            "begin",
            "before",
            "signal",
            "emit-started",
            "row-started",
            "mark-dispatched",
            "execute",
            "result-middleware",
            "output-start",
            "output-await",
            "output-record",
            "redact",
            "complete",
            "emit-finished",
            "row-finished",
            "resolve"
        ]
    );
}

#[test]
fn unknown_tool_and_a_throwing_registry_block_with_unknown_tool() {
    for answer in [Answer::Found(false), Answer::Threw { code: None }] {
        let a = answer.clone();
        let cmds = drive(
            Setup {
                ledger: true,
                ..Setup::default()
            },
            call("nope"),
            move |c| match c {
                Command::Lookup => a.clone(),
                o => happy(o),
            },
        );
        assert_eq!(blocked(&cmds), BlockedReason::UnknownTool);
        assert_eq!(message(&cmds), "Unknown tool: nope");
        assert!(!cmds.contains(&Command::Execute));
        assert_eq!(
            cmds.iter()
                .filter(|c| matches!(c, Command::AppendTerminal(_)))
                .count(),
            1
        );
    }
    // A name that is not a string is never looked up.
    let cmds = drive(
        Setup::default(),
        CallFacts {
            name_is_string: false,
            ..call("x")
        },
        happy,
    );
    assert_eq!(blocked(&cmds), BlockedReason::UnknownTool);
    assert!(!cmds.contains(&Command::Lookup));
}

#[test]
fn filter_denies() {
    let filter = Filter {
        rules: vec![crate::filter::FilterRule::new(vec![], vec!["rm".into()])],
    };
    let cmds = drive(
        Setup {
            filter: Some(Rc::new(filter)),
            ..Setup::default()
        },
        call("rm"),
        happy,
    );
    assert_eq!(blocked(&cmds), BlockedReason::ToolDenied);
    assert_eq!(message(&cmds), "Tool denied: rm");
}

#[test]
fn arguments_that_are_not_an_object_or_failed_to_parse_block() {
    let cmds = drive(
        Setup::default(),
        CallFacts {
            arguments: ArgumentsShape::NotObject,
            ..call("echo")
        },
        happy,
    );
    assert_eq!(blocked(&cmds), BlockedReason::InvalidArguments);
    assert_eq!(message(&cmds), "Tool arguments must be a JSON object");
    let cmds = drive(
        Setup::default(),
        CallFacts {
            arguments: ArgumentsShape::ProviderError,
            ..call("echo")
        },
        happy,
    );
    assert_eq!(blocked(&cmds), BlockedReason::InvalidArguments);
    assert_eq!(ending(&cmds).0, Some(ErrorSpec::ProviderArguments));
}

#[test]
fn provider_hosted_calls_are_never_dispatched() {
    let cmds = drive(
        Setup::default(),
        CallFacts {
            provider_hosted: true,
            ..call("web")
        },
        happy,
    );
    assert_eq!(blocked(&cmds), BlockedReason::ExecutionDenied);
    assert_eq!(code(&cmds), "ERR_PRISM_PROVIDER_HOSTED");
    assert!(!cmds.contains(&Command::Lookup));
}

#[test]
fn identity_trust_and_permission_deny_with_permission_denied() {
    let s = || Setup {
        identity: true,
        trust: true,
        permission: true,
        ..Setup::default()
    };
    let cmds = drive(
        s(),
        call("x"),
        answering(Command::CheckIdentity, Answer::Threw { code: None }, happy),
    );
    assert_eq!(blocked(&cmds), BlockedReason::PermissionDenied);
    assert_eq!(ending(&cmds).0, Some(ErrorSpec::Thrown));

    let cmds = drive(s(), call("x"), |c| match c {
        Command::CheckTrust => Answer::Decision {
            granted: false,
            reason: Some("unsigned".into()),
        },
        o => happy(o),
    });
    assert_eq!(blocked(&cmds), BlockedReason::PermissionDenied);
    assert_eq!(
        ending(&cmds).0,
        Some(ErrorSpec::Named {
            name: "TrustDeniedError",
            message: "unsigned".into(),
            code: "ERR_PRISM_UNTRUSTED",
            cause: None
        })
    );
    assert!(!cmds.contains(&Command::CheckPermission));

    let cmds = drive(s(), call("x"), |c| match c {
        Command::CheckPermission => Answer::Decision {
            granted: false,
            reason: None,
        },
        o => happy(o),
    });
    assert_eq!(message(&cmds), "Permission denied for tool:x:execute");
    assert_eq!(code(&cmds), "ERR_PRISM_PERMISSION_DENIED");

    let cmds = drive(s(), call("x"), |c| match c {
        Command::CheckPermission => Answer::Decision {
            granted: false,
            reason: Some("read-only session".into()),
        },
        o => happy(o),
    });
    assert_eq!(message(&cmds), "read-only session");

    let cmds = drive(s(), call("x"), |c| match c {
        Command::CheckPermission => Answer::Threw { code: None },
        o => happy(o),
    });
    assert_eq!(blocked(&cmds), BlockedReason::PermissionDenied);
    assert_eq!(ending(&cmds).0, Some(ErrorSpec::Thrown));
    let cmds = drive(
        s(),
        call("x"),
        answering(Command::CheckTrust, Answer::Missing, happy),
    );
    assert!(
        matches!(ending(&cmds).0, Some(ErrorSpec::Named { cause: Some(Cause::Text(t)), .. }) if t == "trust policy has no check function")
    );
}

#[test]
fn validation_failures_block_with_validation_failed() {
    let s = || Setup {
        validate: true,
        ..Setup::default()
    };
    let cases = [
        (
            Answer::Validated(Validation::Message("text is required".into())),
            ErrorSpec::Plain("text is required".into()),
        ),
        (
            Answer::Validated(Validation::Info),
            ErrorSpec::ValidatorInfo,
        ),
        (
            Answer::Validated(Validation::Other("a number")),
            ErrorSpec::Plain(
                "Validation failed for tool v: the validator returned a number".into(),
            ),
        ),
        (Answer::Threw { code: None }, ErrorSpec::Thrown),
    ];
    for (answer, spec) in cases {
        let cmds = drive(
            s(),
            call("v"),
            answering(Command::Validate, answer.clone(), happy),
        );
        assert_eq!(blocked(&cmds), BlockedReason::ValidationFailed);
        assert_eq!(ending(&cmds).0, Some(spec));
    }
}

#[test]
fn secrets_never_reach_a_message() {
    let s = Setup {
        validate: true,
        secrets: Rc::new(Secrets::new(["sk-secret"])),
        ..Setup::default()
    };
    let cmds = drive(
        s,
        call("sk-secret"),
        answering(
            Command::Validate,
            Answer::Validated(Validation::Message("bad sk-secret".into())),
            happy,
        ),
    );
    assert_eq!(message(&cmds), "bad [REDACTED]");
    let s = Setup {
        secrets: Rc::new(Secrets::new(["sk-secret"])),
        ..Setup::default()
    };
    let cmds = drive(
        s,
        call("sk-secret"),
        answering(Command::Lookup, Answer::Found(false), happy),
    );
    assert_eq!(message(&cmds), "Unknown tool: [REDACTED]");
}

#[test]
fn before_execute_and_middleware_failures() {
    let cmds = drive(
        Setup {
            before_execute: true,
            ..Setup::default()
        },
        call("x"),
        answering(Command::BeforeExecute, Answer::Threw { code: None }, happy),
    );
    assert_eq!(blocked(&cmds), BlockedReason::ExecutionDenied);
    assert_eq!(cmds.last(), Some(&Command::Resolve));

    // errorPolicy "throw": the terminal row first, then the rejection.
    let cmds = drive(
        Setup {
            middleware: true,
            ledger: true,
            ..Setup::default()
        },
        call("x"),
        answering(Command::CallMiddleware, Answer::Threw { code: None }, happy),
    );
    assert_eq!(blocked(&cmds), BlockedReason::ExecutionDenied);
    let n = cmds.len();
    assert_eq!(
        &cmds[n - 2..],
        &[
            Command::AppendTerminal(Terminal::Blocked(BlockedReason::ExecutionDenied)),
            Command::Reject(Rejection::Thrown)
        ]
    );

    let cmds = drive(
        Setup {
            middleware: true,
            ..Setup::default()
        },
        call("x"),
        answering(
            Command::ResultMiddleware,
            Answer::Threw { code: None },
            happy,
        ),
    );
    assert_eq!(ending(&cmds).1, Some(Terminal::Error));
    assert_eq!(ending(&cmds).0, Some(ErrorSpec::Thrown));
    assert_eq!(cmds.last(), Some(&Command::Reject(Rejection::Thrown)));
}

#[test]
fn middleware_rewrites_the_call_that_the_rest_checks() {
    let filter = Filter {
        rules: vec![crate::filter::FilterRule::new(vec!["safe".into()], vec![])],
    };
    let cmds = drive(
        Setup {
            middleware: true,
            filter: Some(Rc::new(filter)),
            ..Setup::default()
        },
        call("unsafe"),
        |c| match c {
            Command::CallMiddleware => Answer::Call(call("safe")),
            o => happy(o),
        },
    );
    assert!(cmds.contains(&Command::Execute));
    assert_eq!(cmds.last(), Some(&Command::Resolve));
}

#[test]
fn tool_errors_and_bad_results() {
    let cmds = drive(
        Setup {
            emit: true,
            ..Setup::default()
        },
        call("t"),
        answering(Command::Execute, Answer::Threw { code: None }, happy),
    );
    assert_eq!(
        ending(&cmds),
        (Some(ErrorSpec::Thrown), Some(Terminal::Error))
    );
    let cmds = drive(
        Setup::default(),
        call("t"),
        answering(
            Command::Execute,
            Answer::Returned(ToolReturn::NotResult("a number")),
            happy,
        ),
    );
    assert_eq!(
        message(&cmds),
        "Tool t returned a number instead of a ToolResult object"
    );
    assert_eq!(code(&cmds), "invalid_tool_result");
    let cmds = drive(
        Setup::default(),
        call("t"),
        answering(
            Command::Execute,
            Answer::OutputMismatch("/n: expected integer, found string \"x\"".to_owned()),
            happy,
        ),
    );
    assert_eq!(
        message(&cmds),
        "Tool t result does not match its outputSchema: /n: expected integer, found string \"x\""
    );
    assert_eq!(code(&cmds), "ERR_PRISM_INVALID_OUTPUT");
    assert_eq!(ending(&cmds).1, Some(Terminal::Error));
    let cmds = drive(
        Setup::default(),
        call("t"),
        answering(Command::Execute, Answer::NoExecute, happy),
    );
    assert_eq!(code(&cmds), "invalid_tool");
}

#[test]
fn abort_before_and_during_execute() {
    let s = || Setup {
        before_execute: true,
        signal: true,
        ..Setup::default()
    };
    let cmds = drive(
        s(),
        call("slow"),
        answering(Command::BeforeExecute, Answer::Aborted, happy),
    );
    assert_eq!(blocked(&cmds), BlockedReason::ExecutionDenied);
    assert_eq!(code(&cmds), "ERR_PRISM_ABORTED");
    assert_eq!(message(&cmds), "Tool call aborted before execution: slow");
    assert!(!cmds.contains(&Command::Execute));

    // Aborted when the signal is checked, just before the tool: the gated command (here the tool
    // itself) does not run and the call is blocked.
    let cmds = drive_with_signal(s(), call("slow"), true, happy);
    assert_eq!(
        gated(),
        [cmds.iter().position(|c| *c == Command::Execute).unwrap()]
    );
    assert_eq!(blocked(&cmds), BlockedReason::ExecutionDenied);
    assert_eq!(code(&cmds), "ERR_PRISM_ABORTED");
    assert_eq!(message(&cmds), "Tool call aborted before execution: slow");

    let cmds = drive(
        s(),
        call("slow"),
        answering(Command::Execute, Answer::Aborted, happy),
    );
    assert_eq!(ending(&cmds).1, Some(Terminal::Error));
    assert_eq!(code(&cmds), "ERR_PRISM_ABORTED");
    assert_eq!(message(&cmds), "Tool call aborted: slow");
}

#[test]
fn failing_observers_never_change_the_outcome() {
    let cmds = drive(
        Setup {
            emit: true,
            ledger: true,
            ..Setup::default()
        },
        call("t"),
        |c| match c {
            Command::EmitStarted
            | Command::AppendStarted
            | Command::EmitTerminal(_)
            | Command::AppendTerminal(_) => Answer::Threw { code: None },
            o => happy(o),
        },
    );
    assert_eq!(ending(&cmds), (None, Some(Terminal::Finished)));
    assert_eq!(cmds.last(), Some(&Command::Resolve));
}

fn effects() -> Setup {
    Setup {
        identity: true,
        effect_store: true,
        ..Setup::default()
    }
}

fn claiming(c: &Command) -> Answer {
    match c {
        Command::EffectDeclaration => Answer::EffectPlan {
            plan: Some(EffectPlan::ClaimIfStore),
            idempotency_unsupported: false,
        },
        o => happy(o),
    }
}

#[test]
fn effect_claim_is_begun_dispatched_and_completed() {
    let cmds = drive(effects(), call("pay"), claiming);
    let begin = cmds
        .iter()
        .position(|c| *c == Command::EffectBegin)
        .unwrap();
    let mark = cmds
        .iter()
        .position(|c| matches!(c, Command::MarkDispatched(_)))
        .unwrap();
    let exec = cmds.iter().position(|c| *c == Command::Execute).unwrap();
    let done = cmds
        .iter()
        .position(|c| matches!(c, Command::EffectComplete(_)))
        .unwrap();
    assert!(begin < mark && mark < exec && exec < done);
    assert_eq!(
        cmds[mark],
        Command::MarkDispatched(ClaimRef {
            token: "t".into(),
            version: 1.0
        })
    );
    // The version markDispatched answered is the one complete expects.
    assert_eq!(
        cmds[done],
        Command::EffectComplete(ClaimRef {
            token: "t".into(),
            version: 2.0
        })
    );
    assert_eq!(ending(&cmds), (None, Some(Terminal::Finished)));
}

#[test]
fn a_completed_record_replays_and_others_refuse() {
    let cmds = drive(effects(), call("pay"), |c| match c {
        Command::EffectBegin => Answer::Begun(Begun::Existing {
            status: RecordStatus::Completed,
            result_is_object: true,
        }),
        o => claiming(o),
    });
    assert!(cmds.contains(&Command::Replay));
    assert!(!cmds.contains(&Command::Execute));
    assert_eq!(ending(&cmds).1, Some(Terminal::Finished));
    for (status, code_) in [
        (RecordStatus::Dispatched, "ERR_PRISM_TOOL_EFFECT_UNKNOWN"),
        (RecordStatus::Unknown, "ERR_PRISM_TOOL_EFFECT_UNKNOWN"),
        (RecordStatus::Claimed, "ERR_PRISM_TOOL_EFFECT_CONFLICT"),
    ] {
        let cmds = drive(effects(), call("pay"), |c| match c {
            Command::EffectBegin => Answer::Begun(Begun::Existing {
                status,
                result_is_object: false,
            }),
            o => claiming(o),
        });
        assert_eq!(blocked(&cmds), BlockedReason::ExecutionDenied);
        assert_eq!(code(&cmds), code_);
        assert!(!cmds.contains(&Command::Execute));
    }
}

#[test]
fn a_failure_after_dispatch_marks_the_effect_unknown() {
    let cmds = drive(
        effects(),
        call("pay"),
        answering(Command::Execute, Answer::Threw { code: None }, claiming),
    );
    assert_eq!(code(&cmds), "ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    assert!(cmds.contains(&Command::MarkUnknown(ClaimRef {
        token: "t".into(),
        version: 2.0
    })));
    // An error result is a failure too.
    let cmds = drive(
        effects(),
        call("pay"),
        answering(
            Command::Execute,
            Answer::Returned(ToolReturn::Result { has_error: true }),
            claiming,
        ),
    );
    assert!(cmds.iter().any(|c| matches!(c, Command::MarkUnknown(_))));
    // A failed completion is unknown as well.
    let cmds = drive(effects(), call("pay"), |c| {
        if matches!(c, Command::EffectComplete(_)) {
            Answer::Threw { code: None }
        } else {
            claiming(c)
        }
    });
    assert_eq!(code(&cmds), "ERR_PRISM_TOOL_EFFECT_UNKNOWN");
}

#[test]
fn an_unconfirmed_mark_dispatched_reads_the_record_before_marking_it_unknown() {
    let cmds = drive(effects(), call("pay"), |c| match c {
        Command::MarkDispatched(_) => Answer::Threw { code: None },
        Command::EffectGet => Answer::Stored {
            status: RecordStatus::Dispatched,
            token: Some("t2".into()),
            version: Some(5.0),
        },
        o => claiming(o),
    });
    assert!(!cmds.contains(&Command::Execute));
    let get = cmds.iter().position(|c| *c == Command::EffectGet).unwrap();
    assert_eq!(
        cmds[get + 1],
        Command::MarkUnknown(ClaimRef {
            token: "t2".into(),
            version: 5.0
        })
    );
    // Still claimed: nothing to mark.
    let cmds = drive(effects(), call("pay"), |c| match c {
        Command::MarkDispatched(_) => Answer::Record { version: None },
        Command::EffectGet => Answer::Stored {
            status: RecordStatus::Claimed,
            token: Some("t".into()),
            version: Some(1.0),
        },
        o => claiming(o),
    });
    assert!(!cmds.iter().any(|c| matches!(c, Command::MarkUnknown(_))));
}

#[test]
fn a_stop_before_dispatch_releases_the_claim() {
    let s = Setup {
        before_execute: true,
        ..effects()
    };
    let cmds = drive(
        s,
        call("pay"),
        answering(
            Command::BeforeExecute,
            Answer::Threw { code: None },
            claiming,
        ),
    );
    assert!(cmds.contains(&Command::ReleaseClaim(ClaimRef {
        token: "t".into(),
        version: 1.0
    })));
    assert!(!cmds.iter().any(|c| matches!(c, Command::MarkDispatched(_))));
}

#[test]
fn a_suspension_before_execute_keeps_the_claim_retryable_and_rejects_without_an_ending() {
    let s = Setup {
        before_execute: true,
        emit: true,
        ledger: true,
        ..effects()
    };
    let paused = |code: &str| {
        let code = code.to_string();
        drive(
            s.clone(),
            call("pay"),
            answering(
                Command::BeforeExecute,
                Answer::Threw {
                    code: Some(code.clone()),
                },
                claiming,
            ),
        )
    };
    let claim = ClaimRef {
        token: "t".into(),
        version: 1.0,
    };
    // A durable suspension: retryable, so the resumed run may claim the effect again.
    let cmds = paused("ERR_PRISM_AGENT_RUN_SUSPENDED");
    assert!(cmds.contains(&Command::ReleaseRetryable(claim.clone())));
    assert_eq!(cmds.last(), Some(&Command::Reject(Rejection::Thrown)));
    assert!(!cmds.iter().any(|c| matches!(
        c,
        Command::EmitTerminal(_)
            | Command::AppendTerminal(_)
            | Command::SetError(_)
            | Command::Execute
    )));
    // A nested run's suspension or a loop-state error: terminal, and the dispatch rejects too.
    for code in ["ERR_PRISM_DELEGATION_SUSPENDED", "ERR_PRISM_LOOP_STATE"] {
        let cmds = paused(code);
        assert!(
            cmds.contains(&Command::ReleaseClaim(claim.clone())),
            "{code}"
        );
        assert_eq!(cmds.last(), Some(&Command::Reject(Rejection::Thrown)));
    }
    // Any other code blocks the call as before.
    let cmds = paused("ERR_SOMETHING");
    assert_eq!(blocked(&cmds), BlockedReason::ExecutionDenied);
    assert!(cmds.contains(&Command::ReleaseClaim(claim)));
}

#[test]
fn effect_preconditions() {
    // No verified identity.
    let cmds = drive(
        Setup {
            identity: false,
            ..effects()
        },
        call("pay"),
        claiming,
    );
    assert_eq!(code(&cmds), "ERR_PRISM_TOOL_EFFECT_CONFLICT");
    // Upstream's words first (hosts match them), then the tool, what is missing and the fix.
    let m = message(&cmds);
    assert!(
        m.starts_with("verified identity is required for a durable tool effect: tool pay "),
        "{m}"
    );
    assert!(
        m.contains("localIdentity()") && !m.contains("effectStore"),
        "{m}"
    );
    let required = |c: &Command| match c {
        Command::EffectDeclaration => Answer::EffectPlan {
            plan: Some(EffectPlan::ClaimRequired),
            idempotency_unsupported: false,
        },
        o => happy(o),
    };
    // Required but no store.
    let no_store = Setup {
        effect_store: false,
        ..effects()
    };
    let cmds = drive(no_store.clone(), call("pay"), required);
    assert_eq!(code(&cmds), "ERR_PRISM_TOOL_EFFECT_REQUIRED");
    let m = message(&cmds);
    assert!(
        m.starts_with("durable tool effect store is required: tool pay "),
        "{m}"
    );
    assert!(
        m.contains("createMemoryToolEffectStore()") && !m.contains("localIdentity"),
        "{m}"
    );
    // Neither: upstream's code for the identity (checked first), and one message naming both fixes.
    let cmds = drive(
        Setup {
            identity: false,
            ..no_store
        },
        call("pay"),
        required,
    );
    assert_eq!(code(&cmds), "ERR_PRISM_TOOL_EFFECT_CONFLICT");
    let m = message(&cmds);
    assert!(m.contains("neither an identity nor an effect store"), "{m}");
    assert!(
        m.contains("localIdentity()") && m.contains("createMemoryToolEffectStore()"),
        "{m}"
    );
    // Key only: no claim.
    let cmds = drive(effects(), call("pay"), |c| match c {
        Command::EffectDeclaration => Answer::EffectPlan {
            plan: Some(EffectPlan::KeyOnly),
            idempotency_unsupported: false,
        },
        o => happy(o),
    });
    assert!(cmds.contains(&Command::EffectKey) && !cmds.contains(&Command::EffectBegin));
    // A store that throws something other than an effect error: outcome unknown, never executed.
    let cmds = drive(
        effects(),
        call("pay"),
        answering(
            Command::EffectBegin,
            Answer::Threw {
                code: Some("ECONNRESET".into()),
            },
            claiming,
        ),
    );
    assert_eq!(code(&cmds), "ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    let cmds = drive(
        effects(),
        call("pay"),
        answering(
            Command::EffectBegin,
            Answer::Threw {
                code: Some("ERR_PRISM_TOOL_EFFECT_LIMIT".into()),
            },
            claiming,
        ),
    );
    assert_eq!(ending(&cmds).0, Some(ErrorSpec::Thrown));
}

fn guarded(n: u32, max: u32) -> Setup {
    Setup {
        input_guardrails: n,
        output_guardrails: n,
        guardrail_concurrency: max,
        emit: true,
        ..Setup::default()
    }
}

#[test]
fn a_guardrail_block_stops_the_stage() {
    let cmds = drive(guarded(2, 1), call("t"), |c| match c {
        Command::AwaitGuardrail {
            stage: Stage::Input,
            index: 0,
        } => Answer::Guard(
            GuardDecision {
                action: GuardAction::Block,
                reason: Some("no".into()),
                metadata: false,
            },
            GuardFacts {
                name: Some("pii".into()),
                pack: Some("p".into()),
                rule: Some("r".into()),
            },
        ),
        o => happy(o),
    });
    assert_eq!(blocked(&cmds), BlockedReason::GuardrailBlocked);
    assert_eq!(message(&cmds), "Blocked by guardrail rule pack:p/r: no");
    assert!(!cmds.contains(&Command::StartGuardrail {
        stage: Stage::Input,
        index: 1
    }));
    assert!(cmds.contains(&Command::AbortGuardrails));
    assert!(cmds.contains(&Command::GuardrailRecord {
        stage: Stage::Input,
        guardrail: "pii".into(),
        action: "block",
        reason: Some("no".into()),
        metadata: false
    }));
    assert_eq!(cmds.last(), Some(&Command::Resolve));
}

#[test]
fn a_tripwire_rejects_after_the_terminal_row() {
    let cmds = drive(
        Setup {
            ledger: true,
            ..guarded(1, 1)
        },
        call("t"),
        |c| match c {
            Command::AwaitGuardrail {
                stage: Stage::Output,
                ..
            } => Answer::GuardFailed(GuardFacts {
                name: Some("checker".into()),
                ..GuardFacts::default()
            }),
            o => happy(o),
        },
    );
    assert_eq!(blocked(&cmds), BlockedReason::GuardrailBlocked);
    // A guardrail that threw keeps its name in the record.
    assert!(cmds.contains(&Command::GuardrailRecord {
        stage: Stage::Output,
        guardrail: "checker".into(),
        action: "tripwire",
        reason: Some("guardrail_failed".into()),
        metadata: false
    }));
    assert_eq!(
        cmds.last(),
        Some(&Command::Reject(Rejection::Guardrail {
            message: "Guardrail blocked run".into(),
            code: "ERR_PRISM_GUARDRAIL_BLOCKED"
        }))
    );
}

#[test]
fn guardrails_start_up_to_the_concurrency_and_decide_in_order() {
    let cmds = drive(
        Setup {
            output_guardrails: 0,
            ..guarded(3, 2)
        },
        call("t"),
        happy,
    );
    let order: Vec<String> = cmds
        .iter()
        .filter_map(|c| match c {
            Command::StartGuardrail { index, .. } => Some(format!("s{index}")),
            Command::AwaitGuardrail { index, .. } => Some(format!("a{index}")),
            _ => None,
        })
        .collect();
    assert_eq!(order, ["s0", "s1", "a0", "s2", "a1", "a2"]);
}

#[test]
fn guardrail_names_and_reasons_are_bounded_and_redacted() {
    let s = Setup {
        secrets: Rc::new(Secrets::new(["sk-secret"])),
        ..guarded(1, 1)
    };
    let long = "x".repeat(10_000);
    let cmds = drive(s, call("t"), |c| match c {
        Command::AwaitGuardrail {
            stage: Stage::Input,
            ..
        } => Answer::Guard(
            GuardDecision {
                action: GuardAction::Allow,
                reason: Some(format!("sk-secret {long}")),
                metadata: false,
            },
            GuardFacts {
                name: Some(format!("sk-secret{long}")),
                ..GuardFacts::default()
            },
        ),
        o => happy(o),
    });
    let (g, r) = cmds
        .iter()
        .find_map(|c| match c {
            Command::GuardrailRecord {
                guardrail, reason, ..
            } => Some((guardrail.clone(), reason.clone().unwrap())),
            _ => None,
        })
        .unwrap();
    assert!(g.starts_with("[REDACTED]") && g.len() <= 128 + 10);
    assert!(r.starts_with("[REDACTED] ") && r.len() <= 4096 + 10);
    assert_eq!(cmds.last(), Some(&Command::Resolve));
}

#[test]
fn a_malformed_guardrail_or_decision_trips_the_wire() {
    for (a, reason) in [
        (
            Answer::GuardInvalid(GuardFacts::default()),
            "guardrail_invalid",
        ),
        (
            Answer::GuardMalformed(GuardFacts::default()),
            "guardrail_invalid_decision",
        ),
        (
            Answer::GuardFailed(GuardFacts {
                name: Some(String::new()),
                ..GuardFacts::default()
            }),
            "guardrail_failed",
        ),
        (Answer::Aborted, "guardrail_failed"),
    ] {
        let cmds = drive(guarded(1, 1), call("t"), |c| match c {
            Command::AwaitGuardrail {
                stage: Stage::Input,
                ..
            } => a.clone(),
            o => happy(o),
        });
        // Without a usable name (none, or empty) the record is named "invalid", as upstream's.
        assert!(cmds.iter().any(|c| matches!(c,
            Command::GuardrailRecord { reason: Some(r), guardrail, .. } if r == reason && guardrail == "invalid")));
        assert!(matches!(
            cmds.last(),
            Some(Command::Reject(Rejection::Guardrail { .. }))
        ));
    }
}

#[test]
fn an_output_block_after_dispatch_leaves_the_effect_unknown() {
    let s = Setup {
        output_guardrails: 1,
        guardrail_concurrency: 1,
        ..effects()
    };
    let cmds = drive(s, call("pay"), |c| match c {
        Command::AwaitGuardrail { .. } => Answer::Guard(
            GuardDecision {
                action: GuardAction::Block,
                reason: None,
                metadata: false,
            },
            GuardFacts::default(),
        ),
        o => claiming(o),
    });
    assert_eq!(code(&cmds), "ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    assert!(cmds.iter().any(|c| matches!(c, Command::MarkUnknown(_))));
}

// ----- every blocked reason, aborts, observers and effect transitions, path by path -------------

/// A dispatch that ends blocked with `reason`, with events and rows on. The match is exhaustive:
/// a new reason does not compile until it has a path here.
fn blocked_path(reason: BlockedReason) -> Vec<Command> {
    let observed = Setup {
        emit: true,
        ledger: true,
        ..Setup::default()
    };
    match reason {
        BlockedReason::UnknownTool => drive(observed, call("nope"), |c| match c {
            Command::Lookup => Answer::Found(false),
            o => happy(o),
        }),
        BlockedReason::ToolDenied => drive(
            Setup {
                filter: Some(Rc::new(Filter {
                    rules: vec![crate::filter::FilterRule::new(vec!["ls".into()], vec![])],
                })),
                ..observed
            },
            call("rm"),
            happy,
        ),
        BlockedReason::InvalidArguments => drive(
            observed,
            CallFacts {
                arguments: ArgumentsShape::NotObject,
                ..call("echo")
            },
            happy,
        ),
        BlockedReason::PermissionDenied => drive(
            Setup {
                identity: true,
                permission: true,
                ..observed
            },
            call("rm"),
            |c| match c {
                Command::CheckPermission => Answer::Decision {
                    granted: false,
                    reason: None,
                },
                o => happy(o),
            },
        ),
        BlockedReason::ValidationFailed => drive(
            Setup {
                validate: true,
                ..observed
            },
            call("echo"),
            |c| match c {
                Command::Validate => Answer::Validated(Validation::Message("bad".into())),
                o => happy(o),
            },
        ),
        BlockedReason::ExecutionDenied => drive(
            Setup {
                before_execute: true,
                ..observed
            },
            call("echo"),
            |c| match c {
                Command::BeforeExecute => Answer::Threw { code: None },
                o => happy(o),
            },
        ),
        BlockedReason::GuardrailBlocked => drive(
            Setup {
                input_guardrails: 1,
                guardrail_concurrency: 1,
                ..observed
            },
            call("echo"),
            |c| match c {
                Command::AwaitGuardrail { .. } => Answer::Guard(
                    GuardDecision {
                        action: GuardAction::Block,
                        reason: None,
                        metadata: false,
                    },
                    GuardFacts::default(),
                ),
                o => happy(o),
            },
        ),
        // The one blocked reason after the tool ran: it did not settle in time.
        BlockedReason::ToolTimeout => drive(observed, call("slow"), |c| match c {
            Command::Execute => Answer::TimedOut(10),
            o => happy(o),
        }),
    }
}

#[test]
fn every_blocked_reason_ends_with_one_event_one_row_and_no_execute() {
    let all = [
        BlockedReason::UnknownTool,
        BlockedReason::ToolDenied,
        BlockedReason::InvalidArguments,
        BlockedReason::PermissionDenied,
        BlockedReason::ValidationFailed,
        BlockedReason::ExecutionDenied,
        BlockedReason::GuardrailBlocked,
        BlockedReason::ToolTimeout,
    ];
    for reason in all {
        let cmds = blocked_path(reason);
        assert_eq!(blocked(&cmds), reason, "{cmds:?}");
        let executed = cmds.iter().filter(|c| **c == Command::Execute).count();
        let expected = usize::from(reason == BlockedReason::ToolTimeout);
        assert_eq!(executed, expected, "{reason:?} executed {executed} times");
        assert!(ending(&cmds).0.is_some(), "{reason:?} has no error");
        let k = Terminal::Blocked(reason);
        assert_eq!(
            cmds.iter()
                .filter(|c| **c == Command::EmitTerminal(k))
                .count(),
            1
        );
        assert_eq!(
            cmds.iter()
                .filter(|c| **c == Command::AppendTerminal(k))
                .count(),
            1
        );
        // Blocked calls resolve (with the error in the result); they never reject.
        assert_eq!(cmds.last(), Some(&Command::Resolve));
        // The public strings are the documented ones.
        assert_eq!(
            reason.as_str(),
            match reason {
                BlockedReason::UnknownTool => "unknown_tool",
                BlockedReason::ToolDenied => "tool_denied",
                BlockedReason::InvalidArguments => "invalid_arguments",
                BlockedReason::PermissionDenied => "permission_denied",
                BlockedReason::ValidationFailed => "validation_failed",
                BlockedReason::ExecutionDenied => "execution_denied",
                BlockedReason::GuardrailBlocked => "guardrail_blocked",
                BlockedReason::ToolTimeout => "tool_timeout",
            }
        );
    }
}

#[test]
fn an_abort_while_a_hook_runs_blocks_before_lookup() {
    let cmds = drive(
        Setup {
            middleware: true,
            signal: true,
            ..Setup::default()
        },
        call("slow"),
        |c| match c {
            Command::CallMiddleware => Answer::Aborted,
            o => happy(o),
        },
    );
    assert_eq!(blocked(&cmds), BlockedReason::ExecutionDenied);
    assert_eq!(code(&cmds), "ERR_PRISM_ABORTED");
    assert_eq!(message(&cmds), "Tool call aborted before execution: slow");
    assert!(!cmds.contains(&Command::Lookup));
    assert!(!cmds.contains(&Command::Execute));
}

#[test]
fn an_abort_after_the_tool_returned_fails_the_call() {
    // The signal fires while `tool_result` middleware runs: the tool has run, so the call errors
    // (not blocked) with the after-execution message.
    let cmds = drive(
        Setup {
            middleware: true,
            signal: true,
            ..Setup::default()
        },
        call("slow"),
        |c| match c {
            Command::CallMiddleware => Answer::Call(call("slow")),
            Command::ResultMiddleware => Answer::Aborted,
            o => happy(o),
        },
    );
    assert!(cmds.contains(&Command::Execute));
    assert_eq!(ending(&cmds).1, Some(Terminal::Error));
    assert_eq!(code(&cmds), "ERR_PRISM_ABORTED");
    assert_eq!(message(&cmds), "Tool call aborted: slow");
}

#[test]
fn an_abort_around_a_claimed_effect_releases_or_marks_it() {
    let s = || Setup {
        before_execute: true,
        signal: true,
        ..effects()
    };
    // Before dispatch: the claim is released and nothing is marked.
    // (The signal gates `markDispatched`: not run, so nothing was marked.)
    let cmds = drive_with_signal(s(), call("pay"), true, claiming);
    let gates = gated();
    assert_eq!(gates.len(), 1);
    assert!(matches!(cmds[gates[0]], Command::MarkDispatched(_)));
    assert_eq!(blocked(&cmds), BlockedReason::ExecutionDenied);
    assert_eq!(code(&cmds), "ERR_PRISM_ABORTED");
    assert!(cmds.contains(&Command::ReleaseClaim(ClaimRef {
        token: "t".into(),
        version: 1.0
    })));
    assert!(!cmds.iter().any(|c| matches!(
        c,
        Command::MarkUnknown(_) | Command::EffectComplete(_) | Command::Execute
    )));
    // During execute: the effect may have happened, so it is marked unknown, never completed.
    let cmds = drive(s(), call("pay"), |c| match c {
        Command::Execute => Answer::Aborted,
        o => claiming(o),
    });
    assert_eq!(ending(&cmds).1, Some(Terminal::Error));
    assert_eq!(code(&cmds), "ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    assert!(cmds.contains(&Command::MarkUnknown(ClaimRef {
        token: "t".into(),
        version: 2.0
    })));
    assert!(!cmds
        .iter()
        .any(|c| matches!(c, Command::EffectComplete(_) | Command::ReleaseClaim(_))));
}

#[test]
fn an_abort_answer_to_an_observer_is_not_an_abort() {
    // Observers (events, rows) run to completion: an abort reported while one ran does not end
    // the call before its tool runs.
    let cmds = drive(
        Setup {
            emit: true,
            ledger: true,
            signal: true,
            ..Setup::default()
        },
        call("t"),
        |c| match c {
            Command::EmitStarted | Command::AppendStarted => Answer::Aborted,
            o => happy(o),
        },
    );
    assert!(cmds.contains(&Command::Execute));
    assert_eq!(ending(&cmds), (None, Some(Terminal::Finished)));
}

#[test]
fn failing_observers_never_change_a_blocked_or_failed_outcome() {
    let observed = || Setup {
        emit: true,
        ledger: true,
        ..Setup::default()
    };
    let throwing = |c: &Command| match c {
        Command::EmitStarted
        | Command::AppendStarted
        | Command::EmitTerminal(_)
        | Command::AppendTerminal(_) => Answer::Threw { code: None },
        Command::Lookup => Answer::Found(false),
        o => happy(o),
    };
    let cmds = drive(observed(), call("nope"), throwing);
    assert_eq!(blocked(&cmds), BlockedReason::UnknownTool);
    assert_eq!(message(&cmds), "Unknown tool: nope");
    assert_eq!(cmds.last(), Some(&Command::Resolve));

    let cmds = drive(observed(), call("t"), |c| match c {
        Command::Execute => Answer::Threw { code: None },
        Command::EmitStarted
        | Command::AppendStarted
        | Command::EmitTerminal(_)
        | Command::AppendTerminal(_) => Answer::Threw { code: None },
        o => happy(o),
    });
    assert_eq!(
        ending(&cmds),
        (Some(ErrorSpec::Thrown), Some(Terminal::Error))
    );
    // The row is still written after the event failed, and the call still settles once.
    let event = cmds
        .iter()
        .position(|c| matches!(c, Command::EmitTerminal(_)))
        .unwrap();
    assert_eq!(cmds[event + 1], Command::AppendTerminal(Terminal::Error));
    assert_eq!(cmds.last(), Some(&Command::Resolve));
}

#[test]
fn failing_settle_writes_never_change_the_outcome() {
    // markUnknown fails after a failed execute: the call still errors with the effect code and
    // still writes its event and row.
    let cmds = drive(
        Setup {
            emit: true,
            ledger: true,
            ..effects()
        },
        call("pay"),
        |c| match c {
            Command::Execute => Answer::Threw { code: None },
            Command::MarkUnknown(_) => Answer::Threw { code: None },
            o => claiming(o),
        },
    );
    assert_eq!(code(&cmds), "ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    let mark = cmds
        .iter()
        .position(|c| matches!(c, Command::MarkUnknown(_)))
        .unwrap();
    assert_eq!(cmds[mark + 1], Command::EmitTerminal(Terminal::Error));
    assert_eq!(cmds[mark + 2], Command::AppendTerminal(Terminal::Error));
    // A failing release after a stop before dispatch: still blocked, still recorded.
    let cmds = drive(
        Setup {
            before_execute: true,
            ledger: true,
            ..effects()
        },
        call("pay"),
        |c| match c {
            Command::BeforeExecute => Answer::Threw { code: None },
            Command::ReleaseClaim(_) => Answer::Threw { code: None },
            o => claiming(o),
        },
    );
    assert_eq!(blocked(&cmds), BlockedReason::ExecutionDenied);
    let release = cmds
        .iter()
        .position(|c| matches!(c, Command::ReleaseClaim(_)))
        .unwrap();
    assert_eq!(
        cmds[release + 1],
        Command::AppendTerminal(Terminal::Blocked(BlockedReason::ExecutionDenied))
    );
}

#[test]
fn every_begin_answer_has_its_transition() {
    let begin = |answer: Answer| {
        drive(effects(), call("pay"), move |c| match c {
            Command::EffectBegin => answer.clone(),
            o => claiming(o),
        })
    };
    // A malformed answer and a host store's uncoded failure: the claim's outcome is unknown.
    for a in [
        Answer::Begun(Begun::Malformed),
        Answer::Threw { code: None },
    ] {
        let cmds = begin(a);
        assert_eq!(blocked(&cmds), BlockedReason::ExecutionDenied);
        assert_eq!(code(&cmds), "ERR_PRISM_TOOL_EFFECT_UNKNOWN");
        assert_eq!(message(&cmds), "tool effect claim outcome is unknown");
        assert!(!cmds.contains(&Command::Execute));
        // No claim was taken: nothing to release or mark.
        assert!(!cmds.iter().any(|c| matches!(
            c,
            Command::ReleaseClaim(_) | Command::MarkUnknown(_) | Command::EffectGet
        )));
    }
    // The store's own effect error is reported as thrown; so is a store failure that wrote nothing
    // (`ERR_PRISM_TOOL_EFFECT_STORE`: safe to retry, not an unknown outcome).
    for thrown in ["ERR_PRISM_TOOL_EFFECT_LIMIT", "ERR_PRISM_TOOL_EFFECT_STORE"] {
        let cmds = begin(Answer::Threw {
            code: Some(thrown.into()),
        });
        assert_eq!(blocked(&cmds), BlockedReason::ExecutionDenied);
        assert_eq!(ending(&cmds).0, Some(ErrorSpec::Thrown));
        assert!(!cmds.contains(&Command::Execute));
        assert!(!cmds.iter().any(|c| matches!(
            c,
            Command::ReleaseClaim(_) | Command::MarkUnknown(_) | Command::EffectGet
        )));
    }
    // Existing records that cannot run.
    for (status, result_is_object, code_, message_) in [
        (
            RecordStatus::Completed,
            false,
            "ERR_PRISM_TOOL_EFFECT_COMPLETED",
            "tool effect already completed without replayable result",
        ),
        (
            RecordStatus::Other,
            false,
            "ERR_PRISM_TOOL_EFFECT_CONFLICT",
            "tool effect is not dispatchable",
        ),
        (
            RecordStatus::Dispatched,
            true,
            "ERR_PRISM_TOOL_EFFECT_UNKNOWN",
            "tool effect outcome requires reconciliation",
        ),
        (
            RecordStatus::FailedRetryable,
            false,
            "ERR_PRISM_TOOL_EFFECT_EXHAUSTED",
            "tool effect attempts are exhausted",
        ),
    ] {
        let cmds = begin(Answer::Begun(Begun::Existing {
            status,
            result_is_object,
        }));
        assert_eq!(blocked(&cmds), BlockedReason::ExecutionDenied);
        assert_eq!(code(&cmds), code_);
        assert_eq!(message(&cmds), message_);
        assert!(!cmds.contains(&Command::Execute) && !cmds.contains(&Command::Replay));
    }
}

#[test]
fn a_completion_with_no_version_still_finishes() {
    let cmds = drive(effects(), call("pay"), |c| match c {
        Command::EffectComplete(_) => Answer::Record { version: None },
        o => claiming(o),
    });
    assert_eq!(ending(&cmds), (None, Some(Terminal::Finished)));
    assert!(!cmds.iter().any(|c| matches!(c, Command::MarkUnknown(_))));
    // A mark that answered no version leaves the outcome unknown: the tool never runs.
    let cmds = drive(effects(), call("pay"), |c| match c {
        Command::MarkDispatched(_) => Answer::Record { version: None },
        Command::EffectGet => Answer::Threw { code: None },
        o => claiming(o),
    });
    assert!(!cmds.contains(&Command::Execute));
    assert_eq!(code(&cmds), "ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    // The record could not be read: nothing is marked, the call still settles.
    assert!(!cmds.iter().any(|c| matches!(c, Command::MarkUnknown(_))));
    assert_eq!(cmds.last(), Some(&Command::Resolve));
}

#[test]
fn the_signal_gates_the_first_command_of_the_execution_and_only_with_a_signal() {
    let signal = |s: Setup| Setup { signal: true, ..s };
    let observed = Setup {
        emit: true,
        ledger: true,
        ..Setup::default()
    };
    let row_only = Setup {
        ledger: true,
        ..Setup::default()
    };
    type Host = fn(&Command) -> Answer;
    type Gated = fn(&Command) -> bool;
    let cases: [(Setup, Host, Gated); 4] = [
        (signal(Setup::default()), happy, |c| *c == Command::Execute),
        (signal(observed.clone()), happy, |c| {
            *c == Command::EmitStarted
        }),
        (signal(row_only), happy, |c| *c == Command::AppendStarted),
        (signal(effects()), claiming, |c| {
            matches!(c, Command::MarkDispatched(_))
        }),
    ];
    for (setup, host, first) in cases {
        let cmds = drive(setup.clone(), call("t"), host);
        let gates = gated();
        assert_eq!(gates.len(), 1, "{cmds:?}");
        assert!(first(&cmds[gates[0]]), "{cmds:?} gated at {gates:?}");
        assert_eq!(ending(&cmds).1, Some(Terminal::Finished));
        // Aborted at the gate: what it gated and everything after it up to the tool never ran.
        let cmds = drive_with_signal(setup, call("t"), true, host);
        let after: Vec<&Command> = cmds[gated()[0] + 1..].iter().collect();
        assert!(!after.iter().any(|c| matches!(
            c,
            Command::EmitStarted
                | Command::AppendStarted
                | Command::MarkDispatched(_)
                | Command::Execute
        )));
        assert_eq!(code(&cmds), "ERR_PRISM_ABORTED");
        assert_eq!(message(&cmds), "Tool call aborted before execution: t");
    }
    // Without a signal nothing is gated.
    drive(observed, call("t"), happy);
    assert!(gated().is_empty());
}

#[test]
fn a_tool_past_its_deadline_is_blocked_with_tool_timeout() {
    let cmds = drive(
        Setup {
            emit: true,
            ledger: true,
            ..Setup::default()
        },
        call("slow"),
        answering(Command::Execute, Answer::TimedOut(250), happy),
    );
    assert_eq!(blocked(&cmds), BlockedReason::ToolTimeout);
    assert_eq!(BlockedReason::ToolTimeout.as_str(), "tool_timeout");
    assert_eq!(code(&cmds), "ERR_PRISM_TOOL_TIMEOUT");
    assert_eq!(message(&cmds), "Tool call timed out after 250 ms: slow");
    // The blocked event and row are written, and nothing runs after the tool.
    let blocked_terminal = Terminal::Blocked(BlockedReason::ToolTimeout);
    assert!(cmds.contains(&Command::EmitTerminal(blocked_terminal)));
    assert!(cmds.contains(&Command::AppendTerminal(blocked_terminal)));
    assert!(!cmds.contains(&Command::ResultMiddleware));
}

#[test]
fn a_timed_out_effect_is_marked_unknown_never_completed() {
    let cmds = drive(effects(), call("pay"), |c| match c {
        Command::Execute => Answer::TimedOut(1000),
        o => claiming(o),
    });
    assert_eq!(blocked(&cmds), BlockedReason::ToolTimeout);
    assert_eq!(code(&cmds), "ERR_PRISM_TOOL_TIMEOUT");
    assert!(cmds.contains(&Command::MarkUnknown(ClaimRef {
        token: "t".into(),
        version: 2.0
    })));
    assert!(!cmds
        .iter()
        .any(|c| matches!(c, Command::EffectComplete(_) | Command::ReleaseClaim(_))));
}

#[test]
fn an_invalid_tool_timeout_fails_the_call_as_a_definition_error() {
    let cmds = drive(
        Setup::default(),
        call("t"),
        answering(Command::Execute, Answer::InvalidTimeout, happy),
    );
    assert_eq!(ending(&cmds).1, Some(Terminal::Error));
    assert_eq!(code(&cmds), "invalid_tool");
    assert_eq!(
        message(&cmds),
        "Tool t timeoutMs must be an integer from 1 to 2147483647"
    );
}
