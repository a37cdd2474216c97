// Packages: the list, an upload (drop a CSAR or pick one: create the package, PUT its content with
// progress, follow its onboarding), and one package with its VNFD's flavours, VDUs and levels.
import { useState } from 'preact/hooks';
import { api, list, upload } from '../api.ts';
import type { VnfPackage } from '../types.ts';
import { CreateInstanceDialog } from './instances.tsx';
import { packageFlavours } from '../vnfd.ts';
import { Badge, ErrorBox, Field, Json, Loading, short, Table, useLoad } from '../ui.tsx';

const pkgPath = (id: string) => `/vnfpkgm/v2/vnf_packages/${encodeURIComponent(id)}`;

function Upload({ onChange }: { onChange: () => void }) {
  const [status, setStatus] = useState<string>('');
  const [progress, setProgress] = useState<number | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [over, setOver] = useState(false);
  const send = async (file: File | undefined) => {
    if (!file) return;
    setError(undefined);
    try {
      setStatus(`Creating a package for ${file.name}…`);
      const created = await api<VnfPackage>('POST', '/vnfpkgm/v2/vnf_packages', {
        body: { userDefinedData: { uploadedFrom: 'console', fileName: file.name } },
      });
      onChange();
      setStatus(`Uploading ${file.name} to package ${short(created.id)}…`);
      setProgress(0);
      await upload(`${pkgPath(created.id)}/package_content`, file, setProgress);
      setProgress(undefined);
      setStatus(`Package ${short(created.id)} uploaded; onboarding it…`);
      onChange();
      // Followed until onboarding ends: ONBOARDED, or back in CREATED with the reason it failed.
      for (;;) {
        await new Promise((resolve) => window.setTimeout(resolve, 1000));
        const pkg = await api<VnfPackage>('GET', `${pkgPath(created.id)}?fields=onboardingFailureDetails`);
        if (pkg.onboardingState === 'ONBOARDED') {
          setStatus(`Package ${short(created.id)} is ONBOARDED.`);
          break;
        }
        if (pkg.onboardingState === 'CREATED' && pkg.onboardingFailureDetails) {
          setStatus('');
          setError(
            new Error(`Onboarding of package ${short(created.id)} failed: ${pkg.onboardingFailureDetails.detail ?? pkg.onboardingFailureDetails.title ?? ''}`),
          );
          break;
        }
      }
      onChange();
    } catch (caught) {
      setProgress(undefined);
      setStatus('');
      setError(caught as Error);
    }
  };
  return (
    <section aria-labelledby="upload-title">
      <h2 id="upload-title">Upload a package</h2>
      <section
        aria-label="Drop zone"
        class={`drop ${over ? 'over' : ''}`}
        onDragOver={(event) => {
          event.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(event) => {
          event.preventDefault();
          setOver(false);
          void send(event.dataTransfer?.files[0]);
        }}
      >
        <p>Drop a VNF package (CSAR, .zip) here, or</p>
        <Field label="VNF package file">
          <input
            type="file"
            accept=".zip,.csar,application/zip"
            onChange={(event) => {
              const input = event.currentTarget;
              void send(input.files?.[0]).then(() => {
                input.value = '';
              });
            }}
          />
        </Field>
      </section>
      {progress !== undefined ? (
        <progress max={1} value={progress} aria-label="Upload progress">
          {Math.round(progress * 100)}%
        </progress>
      ) : null}
      <p aria-live="polite">{status}</p>
      <ErrorBox error={error} />
    </section>
  );
}

export function Packages() {
  // onboardingFailureDetails is left out of lists unless asked for (SOL005 exclude_default).
  const loaded = useLoad(() => list<VnfPackage>('/vnfpkgm/v2/vnf_packages?fields=onboardingFailureDetails'), [], 2000);
  return (
    <>
      <h1>VNF packages</h1>
      <Upload onChange={loaded.reload} />
      <Loading loaded={loaded} />
      {loaded.data ? (
        <Table
          caption="Packages"
          rows={loaded.data}
          empty="No package yet: upload one"
          columns={[
            {
              title: 'Package',
              cell: (pkg) => (
                <a href={`#/packages/${pkg.id}`}>{pkg.vnfProductName ? `${pkg.vnfProductName} ${pkg.vnfSoftwareVersion ?? ''}` : short(pkg.id)}</a>
              ),
            },
            { title: 'Provider', cell: (pkg) => pkg.vnfProvider ?? '—' },
            { title: 'VNFD', cell: (pkg) => <code>{pkg.vnfdId ?? '—'}</code> },
            {
              title: 'Onboarding',
              cell: (pkg) => (
                <>
                  <Badge value={pkg.onboardingState} />
                  {pkg.onboardingFailureDetails?.detail ? <p class="failure">{pkg.onboardingFailureDetails.detail}</p> : null}
                </>
              ),
            },
            { title: 'Operational', cell: (pkg) => <Badge value={pkg.operationalState} /> },
            { title: 'Usage', cell: (pkg) => pkg.usageState },
          ]}
        />
      ) : null}
    </>
  );
}

function Flavours({ pkg }: { pkg: VnfPackage }) {
  const loaded = useLoad(() => packageFlavours(pkg.id), [pkg.id]);
  if (!loaded.data) return <Loading loaded={loaded} />;
  return (
    <Table
      caption="Deployment flavours (from the VNFD)"
      rows={loaded.data}
      empty="The VNFD names no deployment flavour"
      columns={[
        { title: 'Flavour', cell: (flavour) => <code>{flavour.id}</code> },
        { title: 'Description', cell: (flavour) => flavour.description ?? '—' },
        { title: 'VDUs', cell: (flavour) => flavour.vdus.join(', ') || '—' },
        {
          title: 'Instantiation levels',
          cell: (flavour) => flavour.levels.map((level) => (level === flavour.defaultLevel ? `${level} (default)` : level)).join(', ') || '—',
        },
        {
          title: 'Scaling aspects',
          cell: (flavour) =>
            flavour.aspects.map((aspect) => `${aspect.id}${aspect.maxScaleLevel !== undefined ? ` (max ${aspect.maxScaleLevel})` : ''}`).join(', ') || '—',
        },
      ]}
    />
  );
}

export function PackageDetail({ id }: { id: string }) {
  const loaded = useLoad(() => api<VnfPackage>('GET', pkgPath(id)), [id], 2000);
  const [creating, setCreating] = useState(false);
  const pkg = loaded.data;
  if (!pkg) return <Loading loaded={loaded} />;
  const onboarded = pkg.onboardingState === 'ONBOARDED';
  return (
    <>
      <h1>Package {pkg.vnfProductName ?? short(pkg.id)}</h1>
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{pkg.id}</code>
        </dd>
        <dt>VNFD</dt>
        <dd>
          <code>{pkg.vnfdId ?? '—'}</code> {pkg.vnfdVersion ? `version ${pkg.vnfdVersion}` : ''}
        </dd>
        <dt>Provider</dt>
        <dd>{pkg.vnfProvider ?? '—'}</dd>
        <dt>Software version</dt>
        <dd>{pkg.vnfSoftwareVersion ?? '—'}</dd>
        <dt>Onboarding</dt>
        <dd>
          <Badge value={pkg.onboardingState} />
        </dd>
        <dt>Operational / usage</dt>
        <dd>
          <Badge value={pkg.operationalState} /> {pkg.usageState}
        </dd>
      </dl>
      {pkg.onboardingFailureDetails ? (
        <ErrorBox error={`Onboarding failed: ${pkg.onboardingFailureDetails.title ?? ''}: ${pkg.onboardingFailureDetails.detail ?? ''}`} />
      ) : null}
      {onboarded ? (
        <>
          <div class="buttons">
            <button type="button" class="primary" onClick={() => setCreating(true)} disabled={pkg.operationalState !== 'ENABLED'}>
              Create instance
            </button>
          </div>
          <Flavours pkg={pkg} />
        </>
      ) : null}
      <Json label="Software images" value={pkg.softwareImages} />
      <Json label="Package as the API returns it" value={pkg} />
      {creating ? <CreateInstanceDialog pkg={pkg} onClose={() => setCreating(false)} /> : null}
    </>
  );
}
