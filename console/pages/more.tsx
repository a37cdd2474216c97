// Alarms (acknowledged with PATCH), VIMs and subscriptions (LCM, FM and package notifications).
import { useState } from 'preact/hooks';
import { api, list } from '../api.ts';
import type { Alarm, Subscription, Vim } from '../types.ts';
import { ActionDialog, Badge, ErrorBox, Loading, short, Table, useAction, useLoad, when } from '../ui.tsx';

export function Alarms() {
  const loaded = useLoad(() => list<Alarm>('/vnffm/v1/alarms'), [], 5000);
  const action = useAction(loaded.reload);
  const acknowledge = (alarm: Alarm) =>
    action.run(() =>
      api('PATCH', `/vnffm/v1/alarms/${encodeURIComponent(alarm.id)}`, { body: { ackState: 'ACKNOWLEDGED' }, contentType: 'application/merge-patch+json' }),
    );
  return (
    <>
      <h1>Alarms</h1>
      <ErrorBox error={action.error} />
      <Loading loaded={loaded} />
      {loaded.data ? (
        <Table
          caption="Alarms"
          rows={loaded.data}
          empty="No alarm"
          columns={[
            { title: 'Severity', cell: (alarm) => <Badge value={alarm.perceivedSeverity} /> },
            { title: 'Instance', cell: (alarm) => <a href={`#/instances/${alarm.managedObjectId}`}>{short(alarm.managedObjectId)}</a> },
            { title: 'Event', cell: (alarm) => alarm.eventType ?? '—' },
            { title: 'Cause', cell: (alarm) => alarm.probableCause ?? '—' },
            { title: 'Raised', cell: (alarm) => when(alarm.alarmRaisedTime) },
            { title: 'Cleared', cell: (alarm) => when(alarm.alarmClearedTime) },
            {
              title: 'Acknowledgement',
              cell: (alarm) =>
                alarm.ackState === 'ACKNOWLEDGED' ? (
                  <Badge value="ACKNOWLEDGED" />
                ) : (
                  <button type="button" onClick={() => void acknowledge(alarm)} aria-label={`Acknowledge alarm ${alarm.id}`}>
                    Acknowledge
                  </button>
                ),
            },
          ]}
        />
      ) : null}
    </>
  );
}

export function Vims() {
  const loaded = useLoad(() => list<Vim>('/vnfm/v1/vims'), [], 5000);
  return (
    <>
      <h1>VIMs</h1>
      <p class="note">
        Registered with <code>POST /vnfm/v1/vims</code> (or <code>npx vnfm vim register</code>); credentials are never shown.
      </p>
      <Loading loaded={loaded} />
      {loaded.data ? (
        <Table
          caption="VIMs"
          rows={loaded.data}
          empty="No VIM registered"
          columns={[
            { title: 'Name', cell: (vim) => vim.name ?? '—' },
            { title: 'Id', cell: (vim) => <code>{vim.id ?? vim.vimId}</code> },
            { title: 'Type', cell: (vim) => vim.vimType },
            { title: 'Endpoint', cell: (vim) => String(vim.interfaceInfo?.endpoint ?? '—') },
            { title: 'Status', cell: (vim) => <Badge value={vim.status} /> },
            { title: 'Default', cell: (vim) => (vim.isDefault ? 'yes' : 'no') },
          ]}
        />
      ) : null}
    </>
  );
}

const SUBSCRIPTION_APIS: Array<[string, string]> = [
  ['VNF lifecycle', '/vnflcm/v2/subscriptions'],
  ['VNF faults', '/vnffm/v1/subscriptions'],
  ['VNF packages', '/vnfpkgm/v2/subscriptions'],
];

export function Subscriptions() {
  const loaded = useLoad(
    () => Promise.all(SUBSCRIPTION_APIS.map(async ([api, path]) => ({ api, items: await list<Subscription>(path).catch(() => [] as Subscription[]) }))),
    [],
    10000,
  );
  const [deleting, setDeleting] = useState<{ path: string; id: string } | undefined>(undefined);
  return (
    <>
      <h1>Subscriptions</h1>
      <Loading loaded={loaded} />
      {(loaded.data ?? []).map(({ api: name, items }, index) => (
        <Table
          key={name}
          caption={`${name} notifications`}
          rows={items}
          empty="No subscription"
          columns={[
            { title: 'Id', cell: (subscription) => <code>{subscription.id}</code> },
            { title: 'Callback', cell: (subscription) => subscription.callbackUri },
            { title: 'Filter', cell: (subscription) => (subscription.filter ? <code>{JSON.stringify(subscription.filter)}</code> : 'all') },
            {
              title: 'Delete',
              cell: (subscription) => (
                <button
                  type="button"
                  class="danger"
                  aria-label={`Delete subscription ${subscription.id}`}
                  onClick={() => setDeleting({ path: SUBSCRIPTION_APIS[index]?.[1] ?? '', id: subscription.id })}
                >
                  Delete
                </button>
              ),
            },
          ]}
        />
      ))}
      {deleting ? (
        <ActionDialog
          title="Delete subscription"
          confirm="Delete"
          danger
          onClose={() => {
            setDeleting(undefined);
            loaded.reload();
          }}
          action={async () => {
            await api('DELETE', `${deleting.path}/${encodeURIComponent(deleting.id)}`);
          }}
        >
          <p>{`Delete subscription ${deleting.id}? Its notifications stop.`}</p>
        </ActionDialog>
      ) : null}
    </>
  );
}
