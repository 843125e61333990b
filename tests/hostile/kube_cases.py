"""The Kubernetes API's hostile answers (issue #37, item 3) to `mlcc verify --wait` (the deploy
wait `pulumi up` runs, docs/deploy.md), served by tests/deploy/fake_kube_api.py with the hostile
routes of tests/deploy/hostile_kube.py and the classes of tests/deploy/test_wait_hostile.py:
watches that flood or stay silent, statuses of the wrong types or unknown states, logs of
gigabytes, thousands of pods, broken bodies, an API that changes its answers; and the kubeconfig:
an exec plugin that hangs or prints garbage, a certificate path that is a FIFO.

Each ends in verdict lines (`PASS wait: ...` or `FAIL wait: ...`, or one access error) within
--timeout, with no figure the wait could not know."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import stat
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import deploy_samples as d
import verify_samples as s
from classify import REPO, Case, Invocation, Oracle, all_of, never, says, says_one_of
from fake_kube_api import Behaviour, FakeKubeApi, Scene, status_body
from hostile_kube import Sent, endless, flooding_watch, is_log, is_watch, send, silent_watch, stream
from plan_cases import exit_in
from test_verify_wait_cli import STACK_FILE
from wait_stories import READY_LOGS

TIMEOUT_MIN = 0.05  # --timeout: 3 s
REQUEST_S = 1.0  # --request-timeout
# The wait ends within --timeout, plus one request it may be in (and an exec plugin's run).
BOUND_S = TIMEOUT_MIN * 60 + 2 * REQUEST_S + 2
Route = Callable[[BaseHTTPRequestHandler, str, dict[str, str], int], bool]
Kubeconfig = Callable[[FakeKubeApi, Path], Path]


def serving(at: float = 0) -> Scene:
    return Scene(at, d.endpoint("DeploymentComplete"), [d.pod(ready=True)], logs=READY_LOGS)


def in_progress() -> Scene:
    return Scene(0, d.endpoint("DeploymentInProgress"), [d.pod()])


def project(where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "Pulumi.yaml", where / "Pulumi.yaml")
    (where / "Pulumi.dev.yaml").write_text(STACK_FILE, encoding="utf-8")
    return where


@contextmanager
def verified(
    where: Path,
    scenes: Sequence[Scene],
    behaviour: Behaviour | None = None,
    kubeconfig: Kubeconfig | None = None,
    *extra: str,
    wait: bool = True,
) -> Iterator[Invocation]:
    folder = project(where / "project")
    with FakeKubeApi(scenes, behaviour) as api:
        path = (kubeconfig or (lambda a, p: a.kubeconfig(p)))(api, where / "kubeconfig")
        argv = ["verify", "--project-dir", str(folder), "--kubeconfig", str(path)]
        argv += ["--request-timeout", str(REQUEST_S)]
        if wait:
            argv += ["--wait", "--timeout", str(TIMEOUT_MIN)]
        yield Invocation([*argv, *extra], {}, BOUND_S)


# Lines verify prints: a verdict per check, an indented detail, or the wait's progress on stderr.
NO_FALSE_FIGURE = never(
    r"(?<![\w-])-\d+/\d+ replicas", r"\d+/-\d+ replicas", r"exit code -?\d{6,}", r"restarts -\d"
)


# At a --timeout under the wait's API grace (mlcc/deploy/waiter.py API_GRACE_S, 60 s), an API that
# answers only errors ends at the deadline: the line must say the error the API did send (its
# status, a body too large or not JSON), never that the cluster did not answer.
ANSWERED = never("the cluster never answered", kind="accepted-bad")


def failed(*texts: str) -> Oracle:
    """The wait (or the cluster read) fails in one line that says why."""
    return all_of(
        exit_in(1),
        says_one_of("FAIL wait: ", "FAIL cluster: ", "mlcc verify: error: "),
        says(*texts),
    )


def kube_case(
    name: str,
    oracle: Oracle,
    scenes: Sequence[Scene] = (),
    behaviour: Behaviour | None = None,
    kubeconfig: Kubeconfig | None = None,
    *extra: str,
    wait: bool = True,
    xfail: str = "",
) -> Case:
    chosen = list(scenes) or [serving()]

    def serve(where: Path) -> AbstractContextManager[Invocation]:
        return verified(where, chosen, behaviour, kubeconfig, *extra, wait=wait)

    command = "verify --wait" if wait else "verify"
    return Case(name, "kubernetes", command, serve, all_of(oracle, NO_FALSE_FIGURE), xfail)


def routed(route: Route) -> Behaviour:
    return Behaviour(custom=route)


# --- the watch, the status ---------------------------------------------------------------------


def _watch_cases() -> list[Case]:
    endpoint = d.endpoint("DeploymentInProgress")

    def endless_line(h: BaseHTTPRequestHandler, path: str, q: dict[str, str], _i: int) -> bool:
        if not is_watch(path, q):
            return False
        stream(h, endless(b"x" * 65536), Sent(), "watch")
        return True

    def gone(h: BaseHTTPRequestHandler, path: str, q: dict[str, str], _i: int) -> bool:
        if not is_watch(path, q):
            return False
        send(h, 410, status_body(410, "Expired", "too old resource version"))
        return True

    def garbage_events(h: BaseHTTPRequestHandler, path: str, q: dict[str, str], _i: int) -> bool:
        if not is_watch(path, q):
            return False
        lines = [b'{"type": "MODIFIED", "object": 7}\n', b"not json\n", b'{"type": 5}\n']
        stream(h, itertools.cycle(lines), Sent(), "watch")
        return True

    waiting = [in_progress()]
    return [
        kube_case(
            "watch floods the same version",
            failed("did not serve within"),
            waiting,
            routed(flooding_watch(endpoint, Sent(), same_version=True)),
        ),
        kube_case(
            "watch floods new versions",
            failed("did not serve within"),
            waiting,
            routed(flooding_watch(endpoint, Sent(), same_version=False)),
        ),
        kube_case(
            "watch never sends an event",
            says("PASS wait: "),
            [serving()],
            routed(silent_watch(30.0)),
        ),
        kube_case(
            "watch line without end", failed("did not serve within"), waiting, routed(endless_line)
        ),
        kube_case("watch 410 Gone", failed("did not serve within"), waiting, routed(gone)),
        kube_case(
            "watch garbage events", failed("did not serve within"), waiting, routed(garbage_events)
        ),
        kube_case(
            "watch dropped", failed("did not serve within"), waiting, Behaviour(drop_watch=True)
        ),
    ]


def with_status(**fields: object) -> dict[str, Any]:
    found = d.endpoint("DeploymentComplete")
    found["status"].update(fields)
    return found


def _status_cases() -> list[Case]:
    statuses: dict[str, tuple[dict[str, Any], str]] = {
        "state an int": (with_status(state=5), "status.state: int (5), not text"),
        "observedGeneration a string": (
            with_status(observedGeneration="2"),
            "status.observedGeneration: str ('2'), not a whole number",
        ),
        "conditions a string": (with_status(conditions="Ready"), "status.conditions: str"),
        "status a list": ({**d.endpoint("DeploymentComplete"), "status": [1, 2]}, "status: a list"),
        "sagemaker state a list": (
            with_status(endpoints={"sagemaker": {"state": ["CreationCompleted"]}}),
            "status.endpoints.sagemaker.state: a list, not text",
        ),
    }
    cases = [
        kube_case(
            f"status: {name}",
            failed("did not serve within", unknown),
            [Scene(0, endpoint, [d.pod(ready=True)], logs=READY_LOGS)],
        )
        for name, (endpoint, unknown) in statuses.items()
    ]
    cases += [
        kube_case(
            f"state no source lists: {state!r}",
            failed("a state no source lists"),
            [Scene(0, d.endpoint(state), [d.pod(ready=True)], logs=READY_LOGS)],
        )
        for state in ("InService", "deploymentcomplete", "DeploymentComplete ", "\x1b[31mRed")
    ]
    replicas = d.endpoint("DeploymentInProgress")
    replicas["spec"]["replicas"] = "3"
    cases.append(
        kube_case(
            "spec.replicas a string",
            all_of(failed("1/? replicas ready"), never(r"\d+/3 replicas", r"/1 replicas")),
            [Scene(0, replicas, [d.pod(ready=True)], logs=READY_LOGS)],
        )
    )
    pod = d.pod(waiting=("CrashLoopBackOff", "back-off"), terminated=d.crashed(1), restarts=2)
    worker = pod["status"]["containerStatuses"][1]
    worker["restartCount"] = "many"
    worker["lastState"]["terminated"]["exitCode"] = "1"
    cases.append(
        kube_case(
            "pod counts of the wrong types",
            all_of(failed("CrashLoopBackOff"), never("exit code", r"\brestarts\b")),
            [Scene(0, d.endpoint("DeploymentInProgress"), [pod])],
        )
    )
    flip = [
        serving(),
        Scene(0.3, d.endpoint("DeploymentFailed"), [d.pod()]),
        Scene(0.6, d.endpoint("DeploymentComplete"), [d.pod(ready=True)], logs=READY_LOGS),
        Scene(0.9, None),
    ]
    cases.append(
        kube_case("answers change between reads", says_one_of("PASS wait: ", "FAIL wait: "), flip)
    )
    return cases


# --- logs, lists, bodies -----------------------------------------------------------------------


def pod_list(count: int, token: str = "") -> bytes:
    pods = [
        {"metadata": {"name": f"hp-dev-7c9f8d-{n:05d}", "labels": {"app": "hp-dev"}}}
        for n in range(count)
    ]
    return json.dumps({"kind": "PodList", "metadata": {"continue": token}, "items": pods}).encode()


def _answer_cases() -> list[Case]:
    def log_of(head: bytes) -> Route:
        def route(h: BaseHTTPRequestHandler, path: str, _q: dict[str, str], _i: int) -> bool:
            if not is_log(path):
                return False
            chunks = itertools.chain([head], endless(b"y" * 65536))
            stream(h, chunks, Sent(), "log", "text/plain")
            return True

        return route

    def pods(how: str) -> Route:
        def route(h: BaseHTTPRequestHandler, path: str, q: dict[str, str], _i: int) -> bool:
            if not path.endswith("/pods"):
                return False
            if how == "endless pages":
                send(h, 200, pod_list(250, str(int(q.get("continue") or 0) + 1)))
            else:
                send(h, 200, pod_list(2500) if how == "one page" else pod_list(3, "t"))
            return True

        return route

    def every(status: int, content_type: str, body: bytes) -> Route:
        def route(h: BaseHTTPRequestHandler, _p: str, _q: dict[str, str], _i: int) -> bool:
            send(h, status, body, content_type)
            return True

        return route

    def huge(h: BaseHTTPRequestHandler, _p: str, _q: dict[str, str], _i: int) -> bool:
        stream(h, itertools.chain([b'{"metadata": {"name": "'], endless(b"z" * 65536)), Sent(), "e")
        return True

    def throttled(h: BaseHTTPRequestHandler, _p: str, _q: dict[str, str], _i: int) -> bool:
        body = status_body(429, "TooManyRequests", "slow down")
        send(h, 429, body, headers=[("Retry-After", "3600")])
        return True

    scene = Scene(0, d.endpoint("DeploymentComplete"), [d.pod(ready=True)])
    events = [d.event(d.POD, "Pulling", f"pull {n}", warning=False) for n in range(3000)]
    cases = [
        kube_case(
            "log of gigabytes, no newline",
            failed("still waiting for the engine config line"),
            [scene],
            routed(log_of(b"")),
        ),
        kube_case(
            "log of gigabytes after the config line",
            says("PASS wait: "),
            [scene],
            routed(log_of(s.VLLM_EAGLE3_LOG.encode())),
        ),
        kube_case(
            "thousands of events",
            says("PASS wait: "),
            [Scene(0, d.endpoint("DeploymentComplete"), [d.pod(ready=True)], events, READY_LOGS)],
        ),
        kube_case(
            "answer past the size limit",
            all_of(failed("larger than"), ANSWERED),
            [serving()],
            routed(huge),
        ),
        kube_case(
            "429 asking for an hour",
            all_of(failed("429"), ANSWERED),
            [serving()],
            routed(throttled),
        ),
        kube_case(
            "never answers",
            all_of(failed(), says_one_of("no answer within", "never answered")),
            [serving()],
            Behaviour(answer="hang"),
        ),
        kube_case(
            "trickles its answer",
            all_of(failed(), says_one_of("no complete answer within", "never answered")),
            [serving()],
            Behaviour(trickle_s=0.02),
        ),
        kube_case("401", failed("401"), [serving()], Behaviour(answer="401")),
        kube_case(
            "500",
            all_of(failed("500"), ANSWERED),
            [serving()],
            Behaviour(answer="500"),
        ),
    ]
    # Endless pages list the same 250 pods again and again: either is true of them.
    unread = {"endless pages": says_one_of("not read:", "listed more than once")}
    cases += [
        kube_case(
            f"pods: {how}",
            all_of(failed(), unread.get(how, says("not read:"))),
            [serving()],
            routed(pods(how)),
        )
        for how in ("one page", "endless pages", "a repeated page")
    ]
    bodies = {
        "403": (
            403,
            "application/json",
            status_body(403, "Forbidden", "no access"),
            "403 Forbidden",
        ),
        "404 HTML": (404, "text/html", b"<html>nginx</html>", "not found"),
        "500 text": (500, "text/plain", b"oops", "500 Internal Server Error"),
        "cut JSON": (200, "application/json", b'{"metadata": {"name": "hp-', "is not JSON"),
        "5000 brackets": (200, "application/json", b"[" * 5000, "nested deeper than"),
        "a string": (200, "application/json", b'"a string"', "not an object"),
        "not UTF-8": (200, "application/json", b"\xff\xfe not utf-8 \x80", ""),
        "5000-digit code": (
            200,
            "application/json",
            b'{"kind": "Status", "code": ' + b"9" * 5000 + b"}",
            "",
        ),
    }
    cases += [
        kube_case(
            f"body: {name}",
            all_of(failed(said), ANSWERED),
            [serving()],
            routed(every(code, kind, body)),
        )
        for name, (code, kind, body, said) in bodies.items()
    ]
    return cases


# --- the kubeconfig ---------------------------------------------------------------------------


def _plugin(where: Path, body: str) -> Path:
    script = where.parent / "get-token"
    script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def exec_kubeconfig(body: str) -> Kubeconfig:
    def write(api: FakeKubeApi, path: Path) -> Path:
        user = {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": str(_plugin(path, body)),
                "args": ["eks", "get-token", "--cluster-name", "hp"],
            }
        }
        return api.kubeconfig(path, user=user)

    return write


def fifo_certificate(api: FakeKubeApi, path: Path) -> Path:
    fifo = path.parent / "ca.crt"
    os.mkfifo(fifo)
    written = api.kubeconfig(path)
    text = written.read_text().replace(
        f"server: {api.url}", f"certificate-authority: {fifo}\n    server: {api.url}"
    )
    written.write_text(text)
    return written


def fifo_kubeconfig(_api: FakeKubeApi, path: Path) -> Path:
    os.mkfifo(path)
    return path


def text_kubeconfig(text: str) -> Kubeconfig:
    def write(_api: FakeKubeApi, path: Path) -> Path:
        path.write_text(text, encoding="utf-8")
        return path

    return write


BAD_SERVER = "\n".join(
    [
        "apiVersion: v1",
        "clusters: [{name: c, cluster: {server: 'ht!tp://x y'}}]",
        "users: [{name: u, user: {token: t}}]",
        "contexts: [{name: x, context: {cluster: c, user: u}}]",
        "current-context: x",
        "",
    ]
)
# Each level nine aliases of the one before: 9**7 strings if the reader expanded them.
LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcdef", "bcdefg", strict=True)
)


def _kubeconfig_cases() -> list[Case]:
    access = says_one_of("FAIL cluster: ", "mlcc verify: error: ", "error: ")
    cases = [
        kube_case(
            "exec plugin hangs",
            all_of(exit_in(1), access, says("exec plugin")),
            kubeconfig=exec_kubeconfig("exec sleep 600"),
        ),
        kube_case(
            "exec plugin prints garbage",
            all_of(exit_in(1), access, says("exec plugin")),
            kubeconfig=exec_kubeconfig("echo '{{{ not json'"),
        ),
        kube_case(
            "exec plugin prints 64 MiB",
            all_of(exit_in(1), access, says("exec plugin")),
            kubeconfig=exec_kubeconfig("head -c 67108864 /dev/zero | tr '\\0' x"),
        ),
        kube_case(
            "exec plugin credential of the wrong kind",
            all_of(exit_in(1), access),
            kubeconfig=exec_kubeconfig('echo \'{"kind": "Pod", "status": 5}\''),
        ),
        kube_case(
            "certificate path is a FIFO",
            all_of(exit_in(1), access, says("ca.crt"), never("exec plugin")),
            kubeconfig=fifo_certificate,
        ),
        kube_case(
            "kubeconfig is a FIFO", all_of(exit_in(1, 2), access), kubeconfig=fifo_kubeconfig
        ),
    ]
    texts = {
        "clusters a number": "clusters: 3\n",
        "a list": "- a\n- b\n",
        "users a string": "contexts: [1, {name: x}]\nusers: oops\n",
        "not YAML": ": : :\n",
        "server not a URL": BAD_SERVER,
        "a billion laughs": LAUGHS,
    }
    cases += [
        kube_case(
            f"kubeconfig {name}",
            all_of(exit_in(1, 2), access),
            kubeconfig=text_kubeconfig(text),
        )
        for name, text in texts.items()
    ]
    return cases


def control() -> Case:
    return kube_case("healthy", all_of(exit_in(0), says("PASS wait: ")))


def cases() -> list[Case]:
    return _watch_cases() + _status_cases() + _answer_cases() + _kubeconfig_cases()
