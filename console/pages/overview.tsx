// Overview: instances by instantiation state, operations under way or failed, active (not cleared) alarms, VIMs.
import { list } from '../api.ts';
import type { Alarm, OpOcc, Vim, VnfInstance } from '../types.ts';
import { Badge, Loading, short, Table, useLoad, when } from '../ui.tsx';

const RUNNING = new Set(['STARTING', 'PROCESSING', 'ROLLING_BACK', 'FAILING']);

export function Overview() {
  const loaded = useLoad(
    async () => {
      const [instances, opOccs, alarms, vims] = await Promise.all([
        list<VnfInstance>('/vnflcm/v2/vnf_instances'),
        list<OpOcc>('/vnflcm/v2/vnf_lcm_op_occs'),
        list<Alarm>('/vnffm/v1/alarms').catch(() => [] as Alarm[]),
        list<Vim>('/vnfm/v1/vims').catch(() => [] as Vim[]),
      ]);
      return { instances, opOccs, alarms, vims };
    },
    [],
    5000,
  );
  const data = loaded.data;
  if (!data) return <Loading loaded={loaded} />;
  const count = (state: string) => data.instances.filter((instance) => instance.instantiationState === state).length;
  const attention = data.opOccs.filter((op) => RUNNING.has(op.operationState) || op.operationState === 'FAILED_TEMP');
  const active = data.alarms.filter((alarm) => !alarm.alarmClearedTime);
  return (
    <>
      <h1>Overview</h1>
      <ul class="tiles" aria-label="Summary">
        <li>
          <a href="#/instances">
            <strong>{count('INSTANTIATED')}</strong> instantiated
          </a>
        </li>
        <li>
          <a href="#/instances">
            <strong>{count('NOT_INSTANTIATED')}</strong> not instantiated
          </a>
        </li>
        <li>
          <a href="#/operations">
            <strong>{data.opOccs.filter((op) => RUNNING.has(op.operationState)).length}</strong> operations running
          </a>
        </li>
        <li class={data.opOccs.some((op) => op.operationState === 'FAILED_TEMP') ? 'bad' : ''}>
          <a href="#/operations">
            <strong>{data.opOccs.filter((op) => op.operationState === 'FAILED_TEMP').length}</strong> failed (FAILED_TEMP)
          </a>
        </li>
        <li class={active.length ? 'bad' : ''}>
          <a href="#/alarms">
            <strong>{active.length}</strong> active alarms
          </a>
        </li>
        <li>
          <a href="#/vims">
            <strong>{data.vims.length}</strong> VIMs
          </a>
        </li>
      </ul>
      <Table
        caption="Operations running or failed"
        rows={attention}
        empty="No operation is running or waiting for a decision"
        columns={[
          { title: 'Operation', cell: (op) => <a href={`#/operations/${op.id}`}>{`${op.operation} ${short(op.id)}`}</a> },
          { title: 'State', cell: (op) => <Badge value={op.operationState} /> },
          { title: 'Instance', cell: (op) => <a href={`#/instances/${op.vnfInstanceId}`}>{short(op.vnfInstanceId)}</a> },
          { title: 'Since', cell: (op) => when(op.stateEnteredTime) },
        ]}
      />
      <Table
        caption="Active alarms"
        rows={active}
        empty="No alarm that is not cleared"
        columns={[
          { title: 'Severity', cell: (alarm) => <Badge value={alarm.perceivedSeverity} /> },
          { title: 'Instance', cell: (alarm) => <a href={`#/instances/${alarm.managedObjectId}`}>{short(alarm.managedObjectId)}</a> },
          { title: 'Cause', cell: (alarm) => alarm.probableCause ?? '—' },
          { title: 'Raised', cell: (alarm) => when(alarm.alarmRaisedTime) },
          { title: 'Acknowledged', cell: (alarm) => (alarm.ackState === 'ACKNOWLEDGED' ? 'yes' : 'no') },
        ]}
      />
      <Table
        caption="VIMs"
        rows={data.vims}
        columns={[
          { title: 'Name', cell: (vim) => vim.name ?? vim.id },
          { title: 'Type', cell: (vim) => vim.vimType },
          { title: 'Status', cell: (vim) => <Badge value={vim.status} /> },
          { title: 'Default', cell: (vim) => (vim.isDefault ? 'yes' : 'no') },
        ]}
      />
    </>
  );
}
