// LCM operations: the list (of one instance, or all), and one operation followed live (polled
// every 1.5 s) as a timeline of the states it passed through, with retry, rollback, fail and
// cancel offered when its state allows them.
import { useEffect, useState } from 'preact/hooks';
import { api, list } from '../api.ts';
import type { OpOcc } from '../types.ts';
import { ActionDialog, Badge, Choice, ErrorBox, Json, Loading, short, Table, useLoad, when } from '../ui.tsx';

const opPath = (id: string) => `/vnflcm/v2/vnf_lcm_op_occs/${encodeURIComponent(id)}`;
const FINAL = new Set(['COMPLETED', 'FAILED', 'ROLLED_BACK']);

export function Operations({ instance }: { instance?: string }) {
  const path = instance ? `/vnflcm/v2/vnf_lcm_op_occs?filter=${encodeURIComponent(`(eq,vnfInstanceId,${instance})`)}` : '/vnflcm/v2/vnf_lcm_op_occs';
  const loaded = useLoad(() => list<OpOcc>(path), [path], 2000);
  const rows = [...(loaded.data ?? [])].sort((a, b) => b.startTime.localeCompare(a.startTime));
  return (
    <>
      <h1>{instance ? `Operations of instance ${short(instance)}` : 'Operations'}</h1>
      <Loading loaded={loaded} />
      {loaded.data ? (
        <Table
          caption="LCM operation occurrences, newest first"
          rows={rows}
          empty="No operation yet"
          columns={[
            { title: 'Operation', cell: (op) => <a href={`#/operations/${op.id}`}>{`${op.operation} ${short(op.id)}`}</a> },
            { title: 'State', cell: (op) => <Badge value={op.operationState} /> },
            { title: 'Instance', cell: (op) => <a href={`#/instances/${op.vnfInstanceId}`}>{short(op.vnfInstanceId)}</a> },
            { title: 'Started', cell: (op) => when(op.startTime) },
            { title: 'State entered', cell: (op) => when(op.stateEnteredTime) },
          ]}
        />
      ) : null}
    </>
  );
}

interface Step {
  state: string;
  time: string;
}

type Decision = 'retry' | 'rollback' | 'fail' | 'cancel';

const DECISIONS: Array<{ decision: Decision; label: string; states: string[]; danger?: boolean; explain: string }> = [
  { decision: 'retry', label: 'Retry', states: ['FAILED_TEMP'], explain: 'Runs the failed operation again from where it stopped.' },
  { decision: 'rollback', label: 'Roll back', states: ['FAILED_TEMP'], explain: 'Undoes what the operation changed so far.' },
  { decision: 'fail', label: 'Mark failed', states: ['FAILED_TEMP'], danger: true, explain: 'Ends the operation as FAILED; what it changed stays as it is.' },
  {
    decision: 'cancel',
    label: 'Cancel',
    states: ['STARTING', 'PROCESSING', 'ROLLING_BACK'],
    danger: true,
    explain: 'Stops the operation; it ends in FAILED_TEMP (or ROLLED_BACK while starting).',
  },
];

export function OperationDetail({ id }: { id: string }) {
  const [steps, setSteps] = useState<Step[]>([]);
  const [deciding, setDeciding] = useState<(typeof DECISIONS)[number] | undefined>(undefined);
  const loaded = useLoad(() => api<OpOcc>('GET', opPath(id)), [id], 1500);
  const op = loaded.data;
  useEffect(() => {
    if (!op) return;
    setSteps((seen) => {
      const next = seen.length ? seen : op.operationState === 'STARTING' ? [] : [{ state: 'STARTING', time: op.startTime }];
      const last = next[next.length - 1];
      if (last?.state === op.operationState && last.time === op.stateEnteredTime) return seen.length ? seen : next;
      return [...next, { state: op.operationState, time: op.stateEnteredTime }];
    });
  }, [op?.operationState, op?.stateEnteredTime]);
  if (!op) return <Loading loaded={loaded} />;
  return (
    <>
      <h1>
        {op.operation} <Badge value={op.operationState} />
      </h1>
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{op.id}</code>
        </dd>
        <dt>Instance</dt>
        <dd>
          <a href={`#/instances/${op.vnfInstanceId}`}>{op.vnfInstanceId}</a>
        </dd>
        <dt>Started</dt>
        <dd>{when(op.startTime)}</dd>
        {op.isCancelPending ? (
          <>
            <dt>Cancel</dt>
            <dd>pending</dd>
          </>
        ) : null}
      </dl>
      <section aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        <ol class="timeline" aria-live="polite">
          {steps.map((step) => (
            <li key={`${step.state}-${step.time}`} class={step.state}>
              <Badge value={step.state} /> <time dateTime={step.time}>{when(step.time)}</time>
            </li>
          ))}
          {(op.lcmCoordinations ?? []).map((coordination) => (
            <li key={coordination.id}>
              {`Coordination ${coordination.coordinationActionName}: ${coordination.coordinationResult ?? 'running'}`}{' '}
              <time>{when(coordination.startTime)}</time>
            </li>
          ))}
        </ol>
        {FINAL.has(op.operationState) ? <p>The operation is over.</p> : <p class="note">Updated every 1.5 s.</p>}
      </section>
      {op.error ? <ErrorBox error={`${op.error.title ?? 'Error'}: ${op.error.detail ?? ''}`} /> : null}
      <fieldset class="buttons">
        <legend>Decisions</legend>
        {DECISIONS.filter((candidate) => candidate.states.includes(op.operationState) && !(candidate.decision === 'cancel' && op.isCancelPending)).map(
          (candidate) => (
            <button type="button" key={candidate.decision} class={candidate.danger ? 'danger' : ''} onClick={() => setDeciding(candidate)}>
              {candidate.label}
            </button>
          ),
        )}
      </fieldset>
      <Json label="Operation parameters" value={op.operationParams} />
      <Json label="Resource changes" value={op.resourceChanges} />
      <Json label="Operation as the API returns it" value={op} />
      {deciding ? (
        <ActionDialog
          title={deciding.label}
          confirm={deciding.label}
          danger={deciding.danger}
          onClose={() => {
            setDeciding(undefined);
            loaded.reload();
          }}
          action={async (form) => {
            await api('POST', `${opPath(op.id)}/${deciding.decision}`, deciding.decision === 'cancel' ? { body: { cancelMode: form.get('cancelMode') } } : {});
          }}
        >
          <p>{deciding.explain}</p>
          {deciding.decision === 'cancel' ? (
            <Choice
              label="Cancel mode"
              name="cancelMode"
              options={[
                ['GRACEFUL', 'GRACEFUL'],
                ['FORCEFUL', 'FORCEFUL'],
              ]}
            />
          ) : null}
        </ActionDialog>
      ) : null}
    </>
  );
}
