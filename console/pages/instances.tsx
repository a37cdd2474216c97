// VNF instances: the list (and creating one from an onboarded package), and one instance with its
// VNFCs per VDU, scale status and metadata, and the LCM operations it allows, each confirmed in a dialog.
import { useState } from 'preact/hooks';
import { api, list, send } from '../api.ts';
import type { VnfInstance, VnfPackage } from '../types.ts';
import { vnfdFlavours } from '../vnfd.ts';
import { ActionDialog, Badge, Choice, ErrorBox, Field, Json, jsonField, Loading, short, Table, useLoad } from '../ui.tsx';

const instancePath = (id: string) => `/vnflcm/v2/vnf_instances/${encodeURIComponent(id)}`;

/** Requests an LCM operation and opens its op occ (the 202's Location). */
async function startOperation(id: string, task: string, body: unknown): Promise<void> {
  const response = await send('POST', `${instancePath(id)}/${task}`, { body });
  const opOcc = /\/vnf_lcm_op_occs\/([^/?#]+)/.exec(response.headers.get('Location') ?? '')?.[1];
  location.hash = opOcc ? `#/operations/${opOcc}` : `#/instances/${id}`;
}

/** Adds the optional JSON fields a form has to a request body. */
function withJson(form: FormData, body: Record<string, unknown>, fields: Array<[string, string]>): Record<string, unknown> {
  for (const [name, label] of fields) {
    const value = jsonField(form, name, label);
    if (value !== undefined) body[name] = value;
  }
  return body;
}

function JsonArea({ name, label, hint }: { name: string; label: string; hint?: string }) {
  return (
    <Field label={label} hint={hint}>
      <textarea name={name} rows={3} spellcheck={false} />
    </Field>
  );
}

/** Creates a VNF instance of `pkg`, or of the onboarded package chosen here, and opens it. */
export function CreateInstanceDialog({ pkg, onClose }: { pkg?: VnfPackage; onClose: () => void }) {
  const packages = useLoad(() => (pkg ? Promise.resolve([pkg]) : list<VnfPackage>('/vnfpkgm/v2/vnf_packages')), [pkg?.id]);
  const onboarded = (packages.data ?? []).filter((candidate) => candidate.onboardingState === 'ONBOARDED' && candidate.operationalState === 'ENABLED');
  return (
    <ActionDialog
      title="Create a VNF instance"
      confirm="Create"
      onClose={onClose}
      action={async (form) => {
        const chosen = onboarded.find((candidate) => candidate.id === form.get('package'));
        if (!chosen) throw new Error('Choose an onboarded, enabled package');
        const name = String(form.get('name') ?? '').trim();
        const description = String(form.get('description') ?? '').trim();
        const created = await api<VnfInstance>('POST', '/vnflcm/v2/vnf_instances', {
          body: { vnfdId: chosen.vnfdId, ...(name ? { vnfInstanceName: name } : {}), ...(description ? { vnfInstanceDescription: description } : {}) },
        });
        location.hash = `#/instances/${created.id}`;
      }}
    >
      <Loading loaded={packages} />
      <Field label="Package">
        <select name="package" required>
          {onboarded.map((candidate) => (
            <option value={candidate.id} key={candidate.id}>
              {`${candidate.vnfProductName ?? candidate.vnfdId} ${candidate.vnfSoftwareVersion ?? ''} (${short(candidate.id)})`}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Instance name">
        <input name="name" />
      </Field>
      <Field label="Description">
        <input name="description" />
      </Field>
    </ActionDialog>
  );
}

export function Instances() {
  const loaded = useLoad(() => list<VnfInstance>('/vnflcm/v2/vnf_instances'), [], 3000);
  const [creating, setCreating] = useState(false);
  return (
    <>
      <h1>VNF instances</h1>
      <div class="buttons">
        <button type="button" class="primary" onClick={() => setCreating(true)}>
          Create instance
        </button>
      </div>
      <Loading loaded={loaded} />
      {loaded.data ? (
        <Table
          caption="Instances"
          rows={loaded.data}
          empty="No VNF instance yet"
          columns={[
            { title: 'Instance', cell: (vnf) => <a href={`#/instances/${vnf.id}`}>{vnf.vnfInstanceName || short(vnf.id)}</a> },
            { title: 'Product', cell: (vnf) => vnf.vnfProductName ?? '—' },
            { title: 'State', cell: (vnf) => <Badge value={vnf.instantiationState} /> },
            { title: 'VNFD', cell: (vnf) => <code>{vnf.vnfdId}</code> },
          ]}
        />
      ) : null}
      {creating ? <CreateInstanceDialog onClose={() => setCreating(false)} /> : null}
    </>
  );
}

type Action = 'instantiate' | 'scale' | 'heal' | 'operate' | 'change_vnfpkg' | 'terminate' | 'delete';

function InstantiateDialog({ vnf, onClose }: { vnf: VnfInstance; onClose: () => void }) {
  const flavours = useLoad(() => vnfdFlavours(vnf.vnfdId), [vnf.vnfdId]);
  const [flavourId, setFlavourId] = useState<string>('');
  const flavour = flavours.data?.find((candidate) => candidate.id === (flavourId || flavours.data?.[0]?.id));
  return (
    <ActionDialog
      title="Instantiate"
      confirm="Instantiate"
      onClose={onClose}
      action={async (form) => {
        const body: Record<string, unknown> = { flavourId: String(form.get('flavourId') ?? '') };
        const level = String(form.get('instantiationLevelId') ?? '');
        if (level) body.instantiationLevelId = level;
        await startOperation(
          vnf.id,
          'instantiate',
          withJson(form, body, [
            ['extVirtualLinks', 'External virtual links'],
            ['vimConnectionInfo', 'VIM connection info'],
            ['additionalParams', 'Additional parameters'],
          ]),
        );
      }}
    >
      {flavours.data?.length ? (
        <>
          <Field label="Deployment flavour">
            <select name="flavourId" value={flavour?.id} onChange={(event) => setFlavourId(event.currentTarget.value)}>
              {flavours.data.map((candidate) => (
                <option value={candidate.id} key={candidate.id}>
                  {candidate.description ? `${candidate.id} — ${candidate.description}` : candidate.id}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Instantiation level">
            <select name="instantiationLevelId">
              <option value="">Default{flavour?.defaultLevel ? ` (${flavour.defaultLevel})` : ''}</option>
              {(flavour?.levels ?? []).map((level) => (
                <option value={level} key={level}>
                  {level}
                </option>
              ))}
            </select>
          </Field>
        </>
      ) : !flavours.data && !flavours.error ? (
        <Loading loaded={flavours} />
      ) : (
        <>
          <ErrorBox error={flavours.error} />
          <Field label="Deployment flavour" hint="The VNFD could not be read here: type the flavour's id">
            <input name="flavourId" required />
          </Field>
          <Field label="Instantiation level">
            <input name="instantiationLevelId" />
          </Field>
        </>
      )}
      <JsonArea name="extVirtualLinks" label="External virtual links (JSON)" hint='e.g. [{"id":"ext-public","resourceId":"public","extCps":[...]}]' />
      <JsonArea name="vimConnectionInfo" label="VIM connection info (JSON)" hint="Leave empty to use the tenant's default VIM" />
      <JsonArea name="additionalParams" label="Additional parameters (JSON)" />
    </ActionDialog>
  );
}

function ActionForm({ action, vnf, onClose }: { action: Action; vnf: VnfInstance; onClose: () => void }) {
  const info = vnf.instantiatedVnfInfo;
  const packages = useLoad(() => (action === 'change_vnfpkg' ? list<VnfPackage>('/vnfpkgm/v2/vnf_packages') : Promise.resolve([])), [action]);
  switch (action) {
    case 'instantiate':
      return <InstantiateDialog vnf={vnf} onClose={onClose} />;
    case 'scale':
      return (
        <ActionDialog
          title="Scale"
          confirm="Scale"
          onClose={onClose}
          action={(form) =>
            startOperation(vnf.id, 'scale', {
              type: form.get('type'),
              aspectId: form.get('aspectId'),
              numberOfSteps: Number(form.get('numberOfSteps') ?? 1),
            })
          }
        >
          <Field label="Aspect">
            <select name="aspectId">
              {(info?.scaleStatus ?? []).map((status) => (
                <option value={status.aspectId} key={status.aspectId}>
                  {`${status.aspectId} (level ${status.scaleLevel}${maxLevel(vnf, status.aspectId)})`}
                </option>
              ))}
            </select>
          </Field>
          <Choice
            label="Direction"
            name="type"
            options={[
              ['SCALE_OUT', 'Out (add)'],
              ['SCALE_IN', 'In (remove)'],
            ]}
          />
          <Field label="Steps">
            <input name="numberOfSteps" type="number" min={1} value={1} required />
          </Field>
        </ActionDialog>
      );
    case 'heal':
      return (
        <ActionDialog
          title="Heal"
          confirm="Heal"
          onClose={onClose}
          action={async (form) => {
            const vnfcs = form.getAll('vnfcInstanceId').map(String);
            const cause = String(form.get('cause') ?? '').trim();
            const body: Record<string, unknown> = { ...(vnfcs.length ? { vnfcInstanceId: vnfcs } : {}), ...(cause ? { cause } : {}) };
            await startOperation(vnf.id, 'heal', withJson(form, body, [['additionalParams', 'Additional parameters']]));
          }}
        >
          <fieldset>
            <legend>VNFCs to heal (none: the whole VNF)</legend>
            {(info?.vnfcResourceInfo ?? []).map((vnfc) => (
              <label key={vnfc.id} class="check">
                <input type="checkbox" name="vnfcInstanceId" value={vnfc.id} /> {`${vnfc.vduId} ${vnfc.id}`}
              </label>
            ))}
          </fieldset>
          <Field label="Cause">
            <input name="cause" />
          </Field>
          <JsonArea name="additionalParams" label="Additional parameters (JSON)" />
        </ActionDialog>
      );
    case 'operate':
      return (
        <ActionDialog
          title="Operate"
          confirm="Change state"
          onClose={onClose}
          action={(form) =>
            startOperation(vnf.id, 'operate', {
              changeStateTo: form.get('changeStateTo'),
              ...(form.get('changeStateTo') === 'STOPPED' ? { stopType: form.get('stopType') } : {}),
            })
          }
        >
          <Choice
            label="Change state to"
            name="changeStateTo"
            options={[
              ['STOPPED', 'STOPPED'],
              ['STARTED', 'STARTED'],
            ]}
          />
          <Choice
            label="Stop type"
            name="stopType"
            options={[
              ['GRACEFUL', 'GRACEFUL'],
              ['FORCEFUL', 'FORCEFUL'],
            ]}
          />
        </ActionDialog>
      );
    case 'change_vnfpkg': {
      const choices = (packages.data ?? []).filter((pkg) => pkg.onboardingState === 'ONBOARDED' && pkg.vnfdId && pkg.vnfdId !== vnf.vnfdId);
      return (
        <ActionDialog
          title="Change the VNF package"
          confirm="Change package"
          onClose={onClose}
          action={(form) =>
            startOperation(vnf.id, 'change_vnfpkg', withJson(form, { vnfdId: form.get('vnfdId') }, [['additionalParams', 'Additional parameters']]))
          }
        >
          <Loading loaded={packages} />
          <Field label="Target VNFD">
            <select name="vnfdId" required>
              {choices.map((pkg) => (
                <option value={pkg.vnfdId} key={pkg.id}>
                  {`${pkg.vnfProductName ?? ''} ${pkg.vnfSoftwareVersion ?? ''} (${pkg.vnfdId})`}
                </option>
              ))}
            </select>
          </Field>
          <JsonArea name="additionalParams" label="Additional parameters (JSON)" hint="e.g. the upgrade script's parameters the VNFD names" />
        </ActionDialog>
      );
    }
    case 'terminate':
      return (
        <ActionDialog
          title="Terminate"
          confirm="Terminate"
          danger
          onClose={onClose}
          action={(form) =>
            startOperation(vnf.id, 'terminate', {
              terminationType: form.get('terminationType'),
            })
          }
        >
          <p>Terminating releases every VIM resource of this VNF.</p>
          <Choice
            label="Termination type"
            name="terminationType"
            options={[
              ['FORCEFUL', 'FORCEFUL'],
              ['GRACEFUL', 'GRACEFUL'],
            ]}
          />
        </ActionDialog>
      );
    case 'delete':
      return (
        <ActionDialog
          title="Delete"
          confirm="Delete"
          danger
          onClose={onClose}
          action={async () => {
            await api('DELETE', instancePath(vnf.id));
            location.hash = '#/instances';
          }}
        >
          <p>{`Delete VNF instance ${vnf.vnfInstanceName || vnf.id}? This cannot be undone.`}</p>
        </ActionDialog>
      );
  }
}

function maxLevel(vnf: VnfInstance, aspectId: string): string {
  const max = vnf.instantiatedVnfInfo?.maxScaleLevels?.find((level) => level.aspectId === aspectId)?.scaleLevel;
  return max === undefined ? '' : ` of ${max}`;
}

const ACTIONS: Array<{ action: Action; label: string; when: 'INSTANTIATED' | 'NOT_INSTANTIATED'; danger?: boolean }> = [
  { action: 'instantiate', label: 'Instantiate', when: 'NOT_INSTANTIATED' },
  { action: 'scale', label: 'Scale', when: 'INSTANTIATED' },
  { action: 'heal', label: 'Heal', when: 'INSTANTIATED' },
  { action: 'operate', label: 'Operate', when: 'INSTANTIATED' },
  { action: 'change_vnfpkg', label: 'Change package', when: 'INSTANTIATED' },
  { action: 'terminate', label: 'Terminate', when: 'INSTANTIATED', danger: true },
  { action: 'delete', label: 'Delete', when: 'NOT_INSTANTIATED', danger: true },
];

export function InstanceDetail({ id }: { id: string }) {
  const loaded = useLoad(() => api<VnfInstance>('GET', instancePath(id)), [id], 3000);
  const [action, setAction] = useState<Action | undefined>(undefined);
  const vnf = loaded.data;
  if (!vnf) return <Loading loaded={loaded} />;
  const info = vnf.instantiatedVnfInfo;
  const vdus = new Map<string, NonNullable<typeof info>['vnfcResourceInfo']>();
  for (const vnfc of info?.vnfcResourceInfo ?? []) vdus.set(vnfc.vduId, [...(vdus.get(vnfc.vduId) ?? []), vnfc]);
  return (
    <>
      <h1>Instance {vnf.vnfInstanceName || short(vnf.id)}</h1>
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{vnf.id}</code>
        </dd>
        <dt>State</dt>
        <dd>
          <Badge value={vnf.instantiationState} /> {info?.vnfState ? <Badge value={info.vnfState} /> : null}
        </dd>
        <dt>Product</dt>
        <dd>{`${vnf.vnfProvider ?? ''} ${vnf.vnfProductName ?? ''}`}</dd>
        <dt>VNFD</dt>
        <dd>
          <code>{vnf.vnfdId}</code>
          {vnf.vnfPkgId ? (
            <>
              {' '}
              (<a href={`#/packages/${vnf.vnfPkgId}`}>package</a>)
            </>
          ) : null}
        </dd>
        {info?.flavourId ? (
          <>
            <dt>Flavour</dt>
            <dd>{info.flavourId}</dd>
          </>
        ) : null}
        <dt>Operations</dt>
        <dd>
          <a href={`#/operations?instance=${vnf.id}`}>Operations of this instance</a>
        </dd>
      </dl>
      <fieldset class="buttons">
        <legend>Actions</legend>
        {ACTIONS.filter((candidate) => candidate.when === vnf.instantiationState).map((candidate) => (
          <button type="button" key={candidate.action} class={candidate.danger ? 'danger' : ''} onClick={() => setAction(candidate.action)}>
            {candidate.label}
          </button>
        ))}
      </fieldset>
      {info ? (
        <>
          <Table
            caption="Scale status"
            rows={info.scaleStatus ?? []}
            columns={[
              { title: 'Aspect', cell: (status) => status.aspectId },
              { title: 'Level', cell: (status) => `${status.scaleLevel}${maxLevel(vnf, status.aspectId)}` },
            ]}
          />
          {[...vdus]
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([vdu, vnfcs]) => (
              <Table
                key={vdu}
                caption={`VNFCs of ${vdu}`}
                rows={vnfcs ?? []}
                columns={[
                  { title: 'VNFC', cell: (vnfc) => <code>{vnfc.id}</code> },
                  { title: 'VIM resource', cell: (vnfc) => <code>{vnfc.computeResource?.resourceId ?? '—'}</code> },
                  { title: 'Resource type', cell: (vnfc) => vnfc.computeResource?.vimLevelResourceType ?? '—' },
                  { title: 'VIM', cell: (vnfc) => vnfc.computeResource?.vimConnectionId ?? '—' },
                ]}
              />
            ))}
        </>
      ) : null}
      <Json label="Metadata" value={vnf.metadata} />
      <Json label="Extensions" value={vnf.extensions} />
      <Json label="VIM connections" value={vnf.vimConnectionInfo} />
      <Json label="Instance as the API returns it" value={vnf} />
      {action ? (
        <ActionForm
          action={action}
          vnf={vnf}
          onClose={() => {
            setAction(undefined);
            loaded.reload();
          }}
        />
      ) : null}
    </>
  );
}
