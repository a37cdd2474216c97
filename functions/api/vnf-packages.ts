// API function for the SOL005 VNF package management resources (/vnfpkgm/v1, Tacker's path, and
// /vnfpkgm/v2): packages, their content, VNFD, manifest and artifacts, upload from URI, the
// presigned-upload extension, and package management subscriptions. The package requests
// (CreateVnfPkgInfoRequest, VnfPkgInfoModifications, UploadVnfPackageFromUriRequest) are checked
// by lib/packages/service.ts, which also redacts them; those routes take the JSON as sent.
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import { coreDeps, notifyDeps } from '#lib/deps.ts';
import { renderVnfPkgInfo } from '#lib/packages/model.ts';
import { pkgmSubscriptionRequest, pkgmSubscriptionStore, renderPkgmSubscription } from '#lib/packages/notifications.ts';
import {
  createPkgmSubscription,
  deletePkgmSubscription,
  getPkgmSubscription,
  listPkgmSubscriptions,
  type PkgmSubscriptionDeps,
} from '#lib/packages/subscriptions.ts';
import { createPackage, deletePackage, getPackage, listPackages, modifyPackage, uploadContent, uploadFromUri, uploadUrl } from '#lib/packages/service.ts';
import { readArtifact, readManifest, readPackageContent, type ArtifactSelection, type ByteRangeBody } from '#lib/packages/content.ts';
import { readArtifactSet, readVnfd } from '#lib/packages/zip-content.ts';
import { BadRequestError } from '#lib/sol/errors.ts';
import { bothVersions, httpApi, pagedList, pageSize, route, type ApiRequest, type ApiResult, type RouteTable } from './common/http.ts';

const version = (request: ApiRequest) => request.apiMajorVersion ?? 1;
const packageId = (request: ApiRequest) => request.params.vnfPkgId ?? '';
const collection = (request: ApiRequest) => `${request.baseUrl}/vnfpkgm/v${version(request)}/vnf_packages`;
const subscriptions = (request: ApiRequest) => `${request.baseUrl}/vnfpkgm/v${version(request)}/subscriptions`;
const subscriptionId = (request: ApiRequest) => request.params.subscriptionId ?? '';
const subscriptionDeps = (): PkgmSubscriptionDeps => ({ notify: notifyDeps(), subscriptions: pkgmSubscriptionStore() });

function byteRange(body: ByteRangeBody, contentType: string): ApiResult {
  if (body.redirect) return { status: 302, headers: { Location: body.redirect } };
  const headers: Record<string, string> = { 'Content-Type': contentType, 'Accept-Ranges': 'bytes' };
  if (body.range) headers['Content-Range'] = `bytes ${body.range.start}-${body.range.end}/${body.size}`;
  return { status: body.range ? 206 : 200, bytes: body.bytes ?? Buffer.alloc(0), headers };
}

/** SOL005 9.4.5a.3.2's URI query: flags (no value) and a list of non-MANO artifact set ids. */
function artifactSelection(query: URLSearchParams): ArtifactSelection {
  const known = new Set([
    'include_signatures',
    'exclude_all_mano_artifacts',
    'exclude_all_non_mano_artifacts',
    'select_non_mano_artifact_sets',
    'include_external_artifacts',
  ]);
  const unknown = [...query.keys()].filter((name) => !known.has(name));
  if (unknown.length) throw new BadRequestError(`Unknown query parameter ${unknown.join(', ')}; this resource takes ${[...known].join(', ')}`);
  const excludeNonManoArtifacts = query.has('exclude_all_non_mano_artifacts');
  const sets = query.get('select_non_mano_artifact_sets');
  if (sets !== null && excludeNonManoArtifacts)
    throw new BadRequestError('select_non_mano_artifact_sets cannot be combined with exclude_all_non_mano_artifacts');
  return {
    includeSignatures: query.has('include_signatures'),
    excludeManoArtifacts: query.has('exclude_all_mano_artifacts'),
    excludeNonManoArtifacts,
    ...(sets !== null
      ? {
          nonManoSets: sets
            .split(',')
            .map((set) => set.trim())
            .filter(Boolean),
        }
      : {}),
  };
}

/** The package the request names, in the caller's tenant (404 otherwise). */
const packageOf = (request: ApiRequest) => getPackage(coreDeps(), request.caller, packageId(request));

export const routes: RouteTable = {
  ...bothVersions(
    '/vnf_packages',
    {
      POST: {
        handler: async (request) => {
          const record = await createPackage(coreDeps(), request.caller, request.body);
          const body = renderVnfPkgInfo(record, version(request), request.baseUrl);
          return { status: 201, body, headers: { Location: `${collection(request)}/${record.id}` } };
        },
      },
      GET: {
        handler: async (request) =>
          pagedList(await listPackages(coreDeps(), request.caller, version(request), request.baseUrl, request.rawQuery, pageSize()), collection(request)),
      },
    },
    'vnfpkgm',
  ),
  ...bothVersions(
    '/vnf_packages/{vnfPkgId}',
    {
      GET: { handler: async (request) => ({ status: 200, body: renderVnfPkgInfo(await packageOf(request), version(request), request.baseUrl) }) },
      PATCH: { handler: async (request) => ({ status: 200, body: await modifyPackage(coreDeps(), request.caller, packageId(request), request.body) }) },
      DELETE: {
        handler: async (request) => {
          await deletePackage(coreDeps(), request.caller, packageId(request));
          return { status: 204 };
        },
      },
    },
    'vnfpkgm',
  ),
  ...bothVersions(
    '/vnf_packages/{vnfPkgId}/package_content',
    {
      PUT: {
        raw: ['application/zip', 'application/octet-stream'],
        // Tacker's CLI sends "Accept: application/zip" on the upload.
        produces: ['application/json', 'application/zip'],
        handler: async (request) => {
          await uploadContent(coreDeps(), request.caller, packageId(request), request.rawBody);
          return { status: 202 };
        },
      },
      GET: {
        produces: ['application/zip'],
        handler: async (request) => byteRange(await readPackageContent(await packageOf(request), request.headers.range), 'application/zip'),
      },
    },
    'vnfpkgm',
  ),
  ...bothVersions(
    '/vnf_packages/{vnfPkgId}/package_content/upload_from_uri',
    {
      POST: {
        handler: async (request) => {
          await uploadFromUri(coreDeps(), request.caller, packageId(request), request.body);
          return { status: 202 };
        },
      },
    },
    'vnfpkgm',
  ),
  ...bothVersions(
    '/vnf_packages/{vnfPkgId}/package_content/upload_url',
    {
      POST: { handler: async (request) => ({ status: 200, body: await uploadUrl(coreDeps(), request.caller, packageId(request)) }) },
    },
    'vnfpkgm',
  ),
  ...bothVersions(
    '/vnf_packages/{vnfPkgId}/vnfd',
    {
      GET: {
        produces: ['text/plain', 'application/zip'],
        handler: async (request) => {
          const vnfd = await readVnfd(await packageOf(request), request.headers.accept);
          return { status: 200, bytes: vnfd.bytes, headers: { 'Content-Type': vnfd.contentType } };
        },
      },
    },
    'vnfpkgm',
  ),
  ...bothVersions(
    '/vnf_packages/{vnfPkgId}/manifest',
    {
      GET: {
        produces: ['text/plain', 'application/zip'],
        handler: async (request) => ({ status: 200, bytes: await readManifest(await packageOf(request)), headers: { 'Content-Type': 'text/plain' } }),
      },
    },
    'vnfpkgm',
  ),
  ...bothVersions(
    '/vnf_packages/{vnfPkgId}/artifacts',
    {
      GET: route({
        produces: ['application/zip'],
        query: artifactSelection,
        handler: async (request) => byteRange(await readArtifactSet(await packageOf(request), request.query, request.headers.range), 'application/zip'),
      }),
    },
    'vnfpkgm',
  ),
  ...bothVersions(
    '/vnf_packages/{vnfPkgId}/artifacts/{artifactPath+}',
    {
      GET: {
        produces: ['application/octet-stream', '*/*'],
        handler: async (request) =>
          byteRange(await readArtifact(await packageOf(request), request.params.artifactPath ?? '', request.headers.range), 'application/octet-stream'),
      },
    },
    'vnfpkgm',
  ),
  ...bothVersions(
    '/subscriptions',
    {
      POST: route({
        schema: pkgmSubscriptionRequest,
        title: 'PkgmSubscriptionRequest',
        handler: async (request) => {
          const record = await createPkgmSubscription(subscriptionDeps(), request.caller, request.body, version(request), request.baseUrl);
          return {
            status: 201,
            body: renderPkgmSubscription(record, version(request), request.baseUrl),
            headers: { Location: `${subscriptions(request)}/${record.id}` },
          };
        },
      }),
      GET: {
        handler: async (request) =>
          pagedList(
            await listPkgmSubscriptions(subscriptionDeps(), request.caller, version(request), request.baseUrl, request.rawQuery, pageSize()),
            subscriptions(request),
          ),
      },
    },
    'vnfpkgm',
  ),
  ...bothVersions(
    '/subscriptions/{subscriptionId}',
    {
      GET: {
        handler: async (request) => ({
          status: 200,
          body: renderPkgmSubscription(
            await getPkgmSubscription(subscriptionDeps(), request.caller, subscriptionId(request)),
            version(request),
            request.baseUrl,
          ),
        }),
      },
      DELETE: {
        handler: async (request) => {
          await deletePkgmSubscription(subscriptionDeps(), request.caller, subscriptionId(request));
          return { status: 204 };
        },
      },
    },
    'vnfpkgm',
  ),
};

export const handler = httpApi(routes, { maxRawBodyBytes: 4 * 1024 * 1024 });
