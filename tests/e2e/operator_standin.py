"""A test-only stand-in for the HyperPod inference operator: `OperatorStandIn`.

A thread that reconciles every InferenceEndpointConfig of a `LocalCluster` a few times a second
(level-triggered, like a controller's resync: each round reads the endpoint, its Deployment and
its pods, and writes what differs) and plays a `Story` (tests/e2e/stories.py) per endpoint. It
does what the operator does as docs/operator-facts.md describes it, and nothing that no source
describes except where marked "assumed" below:

Each field it writes -> its values -> the sources (docs/operator-facts.md's short names):

- `metadata.finalizers` gets `FINALIZER`, removed once what it made is gone
  -> chart RBAC (update on `inferenceendpointconfigs/finalizers`); the name: assumed
- a Deployment -> named as the endpoint -> CLI walkthrough
- its pods' label -> `app: <endpoint>` -> CLI SDK (`HPEndpoint.list_pods`)
- `status.selector` -> `app=<endpoint>` -> IEC CRD (the scale subresource's labelSelectorPath)
- `status.state` -> DeploymentPending, DeploymentInProgress, DeploymentComplete,
  DeletionInProgress -> IEC CRD (the `status.state` enum)
- `status.deploymentStatus.name` -> the Deployment's name -> IEC CRD ("Name of the Deployment
  Object")
- `status.deploymentStatus.deploymentObjectOverallState` -> DeploymentInProgress,
  DeploymentComplete -> CLI describe, CLI tests
- `status.deploymentStatus.status` and `.lastUpdated` -> the Deployment's own status, and when
  it changed -> IEC CRD (the DeploymentStatus shape; `lastUpdated` is required)
- `status.observedGeneration`, `status.replicas` -> the generation acted on, the Deployment's
  replicas -> IEC CRD (`statusReplicasPath: .status.replicas`)
- `status.endpoints.sagemaker.state`, only when `spec.endpointName` is not "" and only after
  the deployment -> CreationInProgress then CreationCompleted or CreationFailed; on a new
  generation of a registered endpoint UpdateInProgress then UpdateCompleted or UpdateFailed
  -> SMER CRD (its `status.state` enum); CLI tests, CLI notebook (they wait for
  CreationCompleted); IEC CRD (`endpointName` "" means none); the order: CLI notebook, CLI
  describe
- `status.conditions` -> metav1.Condition items -> IEC CRD (the list and its fields); their
  types (`DeploymentReady`, `SageMakerEndpointRegistered`): assumed (no source lists any)

The worker container is the IEC's `spec.worker` (image, args, env, ports, resources, probes,
working dir, the model volume as an emptyDir), named `model` (assumed: no source names it),
after `spec.kubernetes.initContainers`, with `spec.kubernetes.volumes` (one named as the model
volume replaces it) and `serviceAccountName`; kwok marks the init containers done at once;
pods are pinned to the endpoint's instance types by node affinity (`spec.nodeAffinity` when
given), placed by the real scheduler and run by kwok. The Deployment strategy is Kubernetes'
default (assumed): a rolling update needs room for one more pod.

What a kubelet and the engine would add, the stand-in writes too: each running worker's log
(tests/e2e/engine_logs.py: the serve wrapper's argv for the pod's env, the engine's start
lines for it), and for a crashing engine (a crash_loop story, or a setting the wrapper refuses)
the pod status a kubelet shows (CrashLoopBackOff, restartCount, lastState terminated with exit
code 1), the crashed run's log as the previous one, and a Warning BackOff event. kwok leaves
that status alone: its stages only turn Pending pods Running.
"""

from __future__ import annotations

import json
import threading
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import engine_logs
from kubernetes.client.exceptions import ApiException
from local_cluster import INSTANCE_TYPE_LABEL, LocalCluster, apps_api, core_api, custom_api
from serve_harness import serve
from stories import Story

from mlcc import engine_contract as contract
from mlcc.facts.operator import (
    DEPLOYMENT_OVERALL_STATE,
    ENDPOINT_STATE,
    GROUP,
    NO_SAGEMAKER_ENDPOINT,
    PLURAL,
    POD_NAME_LABEL,
    SAGEMAKER_STATE,
    VERSION,
)

FINALIZER = f"{GROUP}/mlcc-e2e-standin"
WORKER = "model"
TICK_S = 0.1
GENERATION_ANNOTATION = "mlcc-e2e/endpoint-generation"
# The program's labels on the endpoint, standing in for what the image itself sets
# (MLCC_ENGINE and MLCC_ENGINE_VERSION, images/serve/Dockerfile).
ENGINE_LABEL, ENGINE_VERSION_LABEL = "hp.mlcc/engine", "hp.mlcc/engine-version"

PENDING, IN_PROGRESS = ENDPOINT_STATE.working
COMPLETE = ENDPOINT_STATE.ready[0]
DELETING = "DeletionInProgress"  # ENDPOINT_STATE.other
OVERALL_COMPLETE = DEPLOYMENT_OVERALL_STATE.ready[0]
OVERALL_IN_PROGRESS = DEPLOYMENT_OVERALL_STATE.working[0]
CREATING, UPDATING = SAGEMAKER_STATE.working
CREATED, UPDATED = SAGEMAKER_STATE.ready
CREATION_FAILED, UPDATE_FAILED = SAGEMAKER_STATE.failed
DEPLOYMENT_STATUS_FIELDS = (
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "updatedReplicas",
    "unavailableReplicas",
    "observedGeneration",
    "conditions",
)


def rfc3339(moment: float | None = None) -> str:
    when = datetime.fromtimestamp(time.time() if moment is None else moment, UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Memory:
    """What the stand-in remembers of one endpoint (by uid) across rounds."""

    generation: int = 0
    seen_at: float = 0.0
    complete_at: float | None = None
    updating: bool = False  # this generation replaces a registered one
    registered: bool = False
    written: str = ""  # the last status written, without its times
    conditions: dict[str, dict[str, Any]] = field(default_factory=dict)
    logs: set[str] = field(default_factory=set)  # pods whose log is written
    crashed_at: dict[str, float] = field(default_factory=dict)  # pod uid -> its first crash

    def observe(self, generation: int, now: float) -> None:
        if generation == self.generation:
            return
        self.updating = self.registered
        self.generation, self.seen_at, self.complete_at = generation, now, None


class OperatorStandIn:
    """`with OperatorStandIn(cluster, {"ns/hp-dev": slow_success(2)}):` endpoints get served.

    `stories` by `namespace/name` or `name`; may be changed while it runs."""

    def __init__(
        self,
        cluster: LocalCluster,
        stories: Mapping[str, Story] | None = None,
        default: Story | None = None,
        tick_s: float = TICK_S,
    ) -> None:
        self.cluster = cluster
        self.stories = dict(stories or {})
        self.default = default or Story()
        self.tick_s = tick_s
        self.errors: list[str] = []  # unexpected failures of a round, each once
        self._api: Any = None
        self._memory: dict[str, Memory] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="operator-standin", daemon=True)

    def story_of(self, namespace: str, name: str) -> Story:
        """The story named `namespace/name`, else `name`, else the default."""
        found = self.stories.get(f"{namespace}/{name}") or self.stories.get(name)
        return found or self.default

    def __enter__(self) -> OperatorStandIn:
        self._api = self.cluster.api_client()
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self._api.close()

    # --- the loop ----------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                for endpoint in self._endpoints():
                    self._reconcile_one(endpoint)
            except Exception as error:  # the API going away at exit, ...: noted, retried
                self._note(error)
            self._stop.wait(self.tick_s)

    def _note(self, error: Exception) -> None:
        if self._stop.is_set():
            return
        line = "".join(traceback.format_exception_only(error)).strip()
        if line not in self.errors:
            self.errors.append(line)

    def _reconcile_one(self, endpoint: dict[str, Any]) -> None:
        try:
            self.reconcile(endpoint)
        except ApiException as error:
            if error.status not in (404, 409):  # gone meanwhile, or changed: next round
                self._note(error)
        except Exception as error:
            self._note(error)

    def _endpoints(self) -> list[dict[str, Any]]:
        found = _json(custom_api(self._api).list_cluster_custom_object, GROUP, VERSION, PLURAL)
        return list(found.get("items") or [])

    # --- one endpoint --------------------------------------------------------------------------

    def reconcile(self, endpoint: dict[str, Any]) -> None:
        meta = endpoint["metadata"]
        memory = self._memory.setdefault(meta["uid"], Memory())
        if meta.get("deletionTimestamp"):
            self._finalize(endpoint)
            return
        if FINALIZER not in (meta.get("finalizers") or []):
            self._add_finalizer(endpoint)
            return
        now = time.monotonic()
        memory.observe(int(meta.get("generation") or 1), now)
        deployment = self._ensure_deployment(endpoint)
        story = self.story_of(meta["namespace"], meta["name"])
        for pod in self._pods(meta["namespace"], meta["name"]):
            self._play_pod(endpoint, pod, story, memory)
        status = endpoint_status(endpoint, deployment, story, memory, now)
        self._write_status(endpoint, status, memory)

    def _add_finalizer(self, endpoint: dict[str, Any]) -> None:
        meta = endpoint["metadata"]
        finalizers = [*(meta.get("finalizers") or []), FINALIZER]
        self._patch_endpoint(endpoint, finalizers)

    def _patch_endpoint(self, endpoint: dict[str, Any], finalizers: list[str]) -> None:
        meta = endpoint["metadata"]
        # With its resourceVersion: a merge patch that fails (409) if the object changed.
        body = {"metadata": {"finalizers": finalizers, "resourceVersion": meta["resourceVersion"]}}
        custom_api(self._api).patch_namespaced_custom_object(
            GROUP, VERSION, meta["namespace"], PLURAL, meta["name"], body
        )

    def _finalize(self, endpoint: dict[str, Any]) -> None:
        """Delete the Deployment (its pods first), then let the endpoint go."""
        meta = endpoint["metadata"]
        if FINALIZER not in (meta.get("finalizers") or []):
            return
        if (endpoint.get("status") or {}).get("state") != DELETING:
            self._patch_status(endpoint, {"state": DELETING})
        apps = apps_api(self._api)
        try:
            found = _json(apps.read_namespaced_deployment, meta["name"], meta["namespace"])
        except ApiException as error:
            if error.status != 404:
                raise
            rest = [f for f in meta["finalizers"] if f != FINALIZER]
            self._patch_endpoint(endpoint, rest)
            self._memory.pop(meta["uid"], None)
            return
        if not found["metadata"].get("deletionTimestamp"):
            apps.delete_namespaced_deployment(
                meta["name"], meta["namespace"], propagation_policy="Foreground"
            )

    # --- the Deployment and its pods -----------------------------------------------------------

    def _ensure_deployment(self, endpoint: dict[str, Any]) -> dict[str, Any]:
        meta = endpoint["metadata"]
        apps = apps_api(self._api)
        wanted = deployment_for(endpoint)
        try:
            found = _json(apps.read_namespaced_deployment, meta["name"], meta["namespace"])
        except ApiException as error:
            if error.status != 404:
                raise
            return _json(apps.create_namespaced_deployment, meta["namespace"], wanted)
        annotations = found["metadata"].get("annotations") or {}
        if annotations.get(GENERATION_ANNOTATION) == str(meta.get("generation")):
            return found
        found["metadata"]["annotations"] = {**annotations, **wanted["metadata"]["annotations"]}
        found["spec"]["replicas"] = wanted["spec"]["replicas"]
        found["spec"]["template"] = wanted["spec"]["template"]
        return _json(apps.replace_namespaced_deployment, meta["name"], meta["namespace"], found)

    def _pods(self, namespace: str, name: str) -> list[dict[str, Any]]:
        selector = f"{POD_NAME_LABEL}={name}"
        core = core_api(self._api)
        found = _json(core.list_namespaced_pod, namespace, label_selector=selector)
        return list(found.get("items") or [])

    def _play_pod(
        self, endpoint: dict[str, Any], pod: dict[str, Any], story: Story, memory: Memory
    ) -> None:
        """A running worker logs its engine's start, or crashes."""
        meta, status = pod["metadata"], pod.get("status") or {}
        if meta.get("deletionTimestamp") or status.get("phase") != "Running":
            return
        log, crash = engine_run(endpoint, pod, story)
        if crash is not None:
            self._crash(pod, log, story, memory)
        elif meta["uid"] not in memory.logs:
            self.cluster.write_log(meta["namespace"], meta["name"], WORKER, log)
            memory.logs.add(meta["uid"])

    def _crash(self, pod: dict[str, Any], log: str, story: Story, memory: Memory) -> None:
        meta, now = pod["metadata"], time.monotonic()
        first = memory.crashed_at.setdefault(meta["uid"], now)
        restarts = 1 + int((now - first) / story.crash_backoff_s)
        if meta["uid"] not in memory.logs:
            for previous in (True, False):  # a waiting container shows its last run's log
                self.cluster.write_log(meta["namespace"], meta["name"], WORKER, log, previous)
            memory.logs.add(meta["uid"])
            self._back_off_event(pod)
        worker = _worker_status(pod)
        shown = worker.get("state", {}).get("waiting", {}).get("reason") == "CrashLoopBackOff"
        if shown and worker.get("restartCount") == restarts:
            return
        body = crash_status(pod, restarts, story.crash_backoff_s)
        core_api(self._api).patch_namespaced_pod_status(meta["name"], meta["namespace"], body)

    def _back_off_event(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        core_api(self._api).create_namespaced_event(meta["namespace"], back_off_event(pod))

    # --- the endpoint's status -----------------------------------------------------------------

    def _write_status(
        self, endpoint: dict[str, Any], status: dict[str, Any], memory: Memory
    ) -> None:
        essence = json.dumps(_timeless(status), sort_keys=True)
        if essence == memory.written:
            return
        status["deploymentStatus"]["lastUpdated"] = rfc3339()
        self._patch_status(endpoint, status)
        memory.written = essence

    def _patch_status(self, endpoint: dict[str, Any], status: dict[str, Any]) -> None:
        meta = endpoint["metadata"]
        custom_api(self._api).patch_namespaced_custom_object_status(
            GROUP, VERSION, meta["namespace"], PLURAL, meta["name"], {"status": status}
        )


# --- what the stand-in writes (pure) ---------------------------------------------------------


def deployment_for(endpoint: Mapping[str, Any]) -> dict[str, Any]:
    meta, spec = endpoint["metadata"], endpoint["spec"]
    labels = {POD_NAME_LABEL: meta["name"]}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "labels": dict(labels),
            "annotations": {GENERATION_ANNOTATION: str(meta.get("generation"))},
        },
        "spec": {
            "replicas": spec.get("replicas", 1),
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec(spec)},
        },
    }


def pod_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    worker = spec["worker"]
    volume = worker.get("modelVolumeMount") or {}
    container: dict[str, Any] = {
        "name": WORKER,
        "image": worker["image"],
        "env": list(worker.get("environmentVariables") or []),
        "resources": dict(worker.get("resources") or {}),
        **(worker.get("probes") or {}),
    }
    if worker.get("modelInvocationPort"):
        container["ports"] = [dict(worker["modelInvocationPort"])]
    for given, used in (("args", "args"), ("workingDir", "workingDir")):
        if worker.get(given):
            container[used] = worker[given]
    if volume.get("name"):
        container["volumeMounts"] = [{"name": volume["name"], "mountPath": volume["mountPath"]}]
    found: dict[str, Any] = {"containers": [container], "affinity": affinity(spec)}
    # spec.kubernetes: the init containers run before the worker, the volumes are added, one
    # named as the model volume replaces the operator's (the chart's samples, docs/draft-serving.md)
    extra = spec.get("kubernetes") or {}
    if extra.get("initContainers"):
        found["initContainers"] = [dict(c) for c in extra["initContainers"]]
    volumes = [dict(v) for v in extra.get("volumes") or []]
    if volume.get("name") and not any(v.get("name") == volume["name"] for v in volumes):
        volumes.append({"name": volume["name"], "emptyDir": {}})
    if volumes:
        found["volumes"] = volumes
    if extra.get("serviceAccountName"):
        found["serviceAccountName"] = extra["serviceAccountName"]
    return found


def affinity(spec: Mapping[str, Any]) -> dict[str, Any]:
    if spec.get("nodeAffinity"):
        return {"nodeAffinity": spec["nodeAffinity"]}
    types = list(spec.get("instanceTypes") or [spec.get("instanceType")])
    term = {"matchExpressions": [{"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": types}]}
    required = {"nodeSelectorTerms": [term]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}


def image_env(endpoint: Mapping[str, Any]) -> dict[str, str]:
    labels = endpoint["metadata"].get("labels") or {}
    env = {contract.ENGINE_ENV: labels.get(ENGINE_LABEL)}
    env[contract.ENGINE_VERSION_ENV] = labels.get(ENGINE_VERSION_LABEL)
    return {k: str(v) for k, v in env.items() if v}


def engine_run(
    endpoint: Mapping[str, Any], pod: Mapping[str, Any], story: Story
) -> tuple[str, str | None]:
    """The worker's log, and the line it died with (None: it serves)."""
    container = next(c for c in pod["spec"]["containers"] if c["name"] == WORKER)
    env = image_env(endpoint)
    env |= {e["name"]: str(e["value"]) for e in container.get("env") or [] if "value" in e}
    engine = engine_logs.engine_of(env)
    if story.speculation_lost:
        env = engine_logs.without_speculation(env, engine)
    try:
        argv = engine_logs.command(env, container.get("args") or [])
    except serve.Refusal as refusal:
        line = serve.refusal_line(refusal)
        return line + "\n", line
    version = env.get(contract.ENGINE_VERSION_ENV)
    if story.crash_error is not None:
        return engine_logs.crash_log(engine, argv, story.crash_error), story.crash_error
    return engine_logs.start_log(engine, argv, version), None


def rolled_out(deployment: Mapping[str, Any], desired: int) -> bool:
    """The Deployment's controller has seen its spec and every replica is new and ready."""
    status = deployment.get("status") or {}
    seen = status.get("observedGeneration", 0) >= deployment["metadata"].get("generation", 1)
    counts = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas")
    return seen and all(status.get(k, 0) == desired for k in counts)


def endpoint_status(
    endpoint: Mapping[str, Any],
    deployment: Mapping[str, Any],
    story: Story,
    memory: Memory,
    now: float,
) -> dict[str, Any]:
    spec, name = endpoint["spec"], endpoint["metadata"]["name"]
    deployed = deployment.get("status") or {}
    done = rolled_out(deployment, spec.get("replicas", 1)) and story.crash_error is None
    if done and now - memory.seen_at >= story.deploy_s:
        memory.complete_at = memory.complete_at or now
    state = COMPLETE if memory.complete_at else IN_PROGRESS if deployed else PENDING
    status: dict[str, Any] = {
        "state": state,
        "observedGeneration": memory.generation,
        "replicas": deployed.get("replicas", 0),
        "selector": f"{POD_NAME_LABEL}={name}",
        "deploymentStatus": {
            "name": name,
            "lastUpdated": "",  # set when written
            "deploymentObjectOverallState": OVERALL_COMPLETE
            if state == COMPLETE
            else OVERALL_IN_PROGRESS,
            "status": {k: deployed[k] for k in DEPLOYMENT_STATUS_FIELDS if k in deployed},
        },
    }
    ready = f"{deployed.get('readyReplicas', 0)}/{spec.get('replicas', 1)} replicas ready"
    conditions: list[tuple[str, bool | None, str, str]] = [
        ("DeploymentReady", state == COMPLETE, state, f"Deployment {name}: {ready}")
    ]
    registration = sagemaker_state(spec, story, memory, now)
    if registration is not None:
        status["endpoints"] = {"sagemaker": {"state": registration}}
        conditions.append(registration_condition(registration, story))
    status["conditions"] = [condition(memory, *c) for c in conditions]
    return status


def sagemaker_state(
    spec: Mapping[str, Any], story: Story, memory: Memory, now: float
) -> str | None:
    if (spec.get("endpointName") or NO_SAGEMAKER_ENDPOINT) == NO_SAGEMAKER_ENDPOINT:
        return None
    if memory.complete_at is None:
        return UPDATING if memory.updating else None  # registered after the deployment
    if now - memory.complete_at < story.register_s:
        return UPDATING if memory.updating else CREATING
    if story.registration_error is not None:
        return UPDATE_FAILED if memory.updating else CREATION_FAILED
    memory.registered = True
    return UPDATED if memory.updating else CREATED


def registration_condition(state: str, story: Story) -> tuple[str, bool | None, str, str]:
    if state in SAGEMAKER_STATE.failed:
        return ("SageMakerEndpointRegistered", False, state, story.registration_error or "")
    if state in SAGEMAKER_STATE.ready:
        return ("SageMakerEndpointRegistered", True, state, "SageMaker endpoint registered")
    return ("SageMakerEndpointRegistered", None, state, "registering the SageMaker endpoint")


def condition(
    memory: Memory, kind: str, holds: bool | None, reason: str, message: str
) -> dict[str, Any]:
    """A metav1.Condition; its lastTransitionTime moves only when its status does."""
    status = "Unknown" if holds is None else str(holds)
    before = memory.conditions.get(kind)
    since = before["lastTransitionTime"] if before and before["status"] == status else rfc3339()
    found = {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": since,
        "observedGeneration": memory.generation,
    }
    memory.conditions[kind] = found
    return found


def crash_status(pod: Mapping[str, Any], restarts: int, backoff_s: float) -> dict[str, Any]:
    """The pod status a kubelet shows for a worker that keeps exiting with code 1."""
    meta, now = pod["metadata"], rfc3339()
    container = next(c for c in pod["spec"]["containers"] if c["name"] == WORKER)
    where = f"{meta['name']}_{meta['namespace']}({meta['uid']})"
    unready = {
        "status": "False",
        "reason": "ContainersNotReady",
        "message": f"containers with unready status: [{WORKER}]",
        "lastTransitionTime": now,
    }
    worker = {
        "name": WORKER,
        "image": container["image"],
        "imageID": "",
        "ready": False,
        "started": False,
        "restartCount": restarts,
        "state": {
            "waiting": {
                "reason": "CrashLoopBackOff",
                "message": f"back-off {backoff_s:g}s restarting failed container={WORKER} "
                f"pod={where}",
            }
        },
        "lastState": {
            "terminated": {"exitCode": 1, "reason": "Error", "startedAt": now, "finishedAt": now}
        },
    }
    return {
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", **unready}, {"type": "ContainersReady", **unready}],
            "containerStatuses": [worker],
        }
    }


def back_off_event(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The kubelet's Warning event about a container it restarts with a back-off."""
    meta, now = pod["metadata"], rfc3339()
    where = f"{meta['name']}_{meta['namespace']}({meta['uid']})"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta["uid"],
            "fieldPath": f"spec.containers{{{WORKER}}}",
        },
        "reason": "BackOff",
        "message": f"Back-off restarting failed container {WORKER} in pod {where}",
        "type": "Warning",
        "source": {"component": "kubelet", "host": pod["spec"].get("nodeName", "")},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }


def _worker_status(pod: Mapping[str, Any]) -> dict[str, Any]:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == WORKER:
            return dict(status)
    return {}


def _timeless(status: Mapping[str, Any]) -> dict[str, Any]:
    found = json.loads(json.dumps(status))
    found["deploymentStatus"].pop("lastUpdated", None)
    for item in found.get("conditions") or []:
        item.pop("lastTransitionTime", None)
    return dict(found)


def _json(call: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """A client call's answer as the API's JSON (the client's models are not needed here)."""
    answer = call(*args, _preload_content=False, **kwargs)
    found: dict[str, Any] = json.loads(answer.data)
    return found
