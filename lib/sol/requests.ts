// Request bodies of the SOL003 VNF LCM API, as zod schemas derived from the SOL003 model
// (clause 5.5.2). Top-level attributes are strict: an attribute the spec does not define is a 400,
// so a typo in an NFVO's request is reported instead of silently ignored.
import * as z from 'zod';
import { isSecretKey, withoutUserinfo } from '#lib/redact.ts';
import { BadRequestError } from './errors.ts';

const keyValuePairs = z.record(z.string(), z.unknown());
const identifier = z.string().min(1).max(255);

const CREDENTIALS_IN_URI = 'must not carry credentials (user:password@host): they would be stored and logged with the URI';

function isHttpUri(value: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/**
 * An absolute http(s) URI a caller gives the product to call. Userinfo is refused: a URI is kept in
 * records, executions and logs, so credentials must come in the request's own fields (which go to
 * the secret store). `hint` says which fields those are.
 */
export function httpUri(hint = 'give credentials in the fields made for them') {
  return z
    .string()
    .max(2048)
    .refine(isHttpUri, 'must be an absolute http(s) URI')
    .refine((uri) => !isHttpUri(uri) || (new URL(uri).username === '' && new URL(uri).password === ''), `${CREDENTIALS_IN_URI}; ${hint}`);
}

/**
 * interfaceInfo is shown in records and every response, so none of its attributes may be a
 * credential: none named like one (a token, a password) and no URL with credentials in it.
 */
export function refuseCredentialsIn(pairs: Record<string, unknown>, ctx: z.RefinementCtx): void {
  for (const [key, value] of Object.entries(pairs)) {
    if (isSecretKey(key)) {
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: 'is named like a credential, and interfaceInfo is shown in every response; give credentials in accessInfo',
      });
    } else if (typeof value === 'string' && withoutUserinfo(value) !== value) {
      ctx.addIssue({ code: 'custom', path: [key], message: `${CREDENTIALS_IN_URI}; give them in accessInfo` });
    }
  }
}

const interfaceInfoPairs = keyValuePairs.superRefine(refuseCredentialsIn);

/** SOL003 4.4.1.6 VimConnectionInfo (a merge patch may carry only part of one). */
export const vimConnectionInfoPatch = z
  .object({
    vimId: identifier.nullable().optional(),
    vimType: z.string().min(1).nullable().optional(),
    interfaceInfo: interfaceInfoPairs.nullable().optional(),
    accessInfo: keyValuePairs.nullable().optional(),
    extra: keyValuePairs.nullable().optional(),
  })
  .strict();

export const vimConnectionInfo = z
  .object({
    vimId: identifier.optional(),
    vimType: z.string().min(1),
    interfaceInfo: interfaceInfoPairs.optional(),
    accessInfo: keyValuePairs.optional(),
    extra: keyValuePairs.optional(),
  })
  .strict();

/** SOL003 5.5.2.3 CreateVnfRequest */
export const createVnfRequest = z
  .object({
    vnfdId: identifier,
    vnfInstanceName: z.string().max(255).optional(),
    vnfInstanceDescription: z.string().max(1024).optional(),
    metadata: keyValuePairs.optional(),
  })
  .strict();
export type CreateVnfRequest = z.infer<typeof createVnfRequest>;

const vnfcInfoModification = z
  .object({
    id: identifier,
    vnfcConfigurableProperties: keyValuePairs,
  })
  .strict();

/**
 * SOL003 5.5.2.12 VnfInfoModificationRequest. `vnfdId` is Tacker's v2 spelling of the package
 * change and is accepted beside the spec's `vnfPkgId`. v1 sends vimConnectionInfo as an array of
 * connections with their own `id`; it is normalised into the v2 map before validation.
 */
export const vnfInfoModificationRequest = z
  .object({
    vnfInstanceName: z.string().max(255).nullable().optional(),
    vnfInstanceDescription: z.string().max(1024).nullable().optional(),
    vnfPkgId: identifier.optional(),
    vnfdId: identifier.optional(),
    vnfConfigurableProperties: keyValuePairs.nullable().optional(),
    metadata: keyValuePairs.nullable().optional(),
    extensions: keyValuePairs.nullable().optional(),
    vimConnectionInfo: z.record(identifier, vimConnectionInfoPatch.nullable()).optional(),
    vnfcInfoModifications: z.array(vnfcInfoModification).optional(),
  })
  .strict();
export type VnfInfoModificationRequest = z.infer<typeof vnfInfoModificationRequest>;

/** Formats a zod failure as one readable sentence naming each offending attribute path. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length ? issue.path.join('.') : 'body';
      if (issue.code === 'unrecognized_keys') {
        return `${path === 'body' ? '' : `${path}: `}unknown attribute(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
      }
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}

export function parseRequest<S extends z.ZodType>(schema: S, body: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(body);
  if (!result.success) throw new BadRequestError(`Invalid ${what}: ${describeIssues(result.error)}`);
  return result.data;
}

/** v1 models vimConnectionInfo as `[{id, ...}]`; turn it into the v2 map. */
export function normaliseV1Modification(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const { vimConnectionInfo, ...rest } = body as Record<string, unknown>;
  if (!Array.isArray(vimConnectionInfo)) return body;
  const map: Record<string, unknown> = {};
  for (const [index, item] of vimConnectionInfo.entries()) {
    if (!item || typeof item !== 'object' || typeof (item as { id?: unknown }).id !== 'string') {
      throw new BadRequestError(`Invalid VnfInfoModificationRequest: vimConnectionInfo.${index}.id: a string id is required`);
    }
    const { id, ...connection } = item as Record<string, unknown> & { id: string };
    map[id] = connection;
  }
  return { ...rest, vimConnectionInfo: map };
}

const extVirtualLink = z
  .object({
    id: identifier,
    vimConnectionId: identifier.optional(),
    resourceProviderId: identifier.optional(),
    resourceId: identifier,
    extCps: z.array(z.object({ cpdId: identifier, cpConfig: z.record(z.string(), z.unknown()).optional() }).passthrough()).default([]),
    extLinkPorts: z.array(z.record(z.string(), z.unknown())).optional(),
  })
  .passthrough();

/** SOL003 5.5.2.4 InstantiateVnfRequest (vimConnectionInfo as the v2 map; v1 arrays are normalised first). */
export const instantiateVnfRequest = z
  .object({
    flavourId: identifier,
    instantiationLevelId: identifier.optional(),
    extVirtualLinks: z.array(extVirtualLink).optional(),
    extManagedVirtualLinks: z.array(z.record(z.string(), z.unknown())).optional(),
    vimConnectionInfo: z.record(identifier, vimConnectionInfo).optional(),
    localizationLanguage: z.string().optional(),
    additionalParams: keyValuePairs.optional(),
    extensions: keyValuePairs.optional(),
    vnfConfigurableProperties: keyValuePairs.optional(),
  })
  .strict();
export type InstantiateVnfRequest = z.infer<typeof instantiateVnfRequest>;

/** SOL003 5.5.2.8 TerminateVnfRequest */
export const terminateVnfRequest = z
  .object({
    terminationType: z.enum(['FORCEFUL', 'GRACEFUL']),
    gracefulTerminationTimeout: z.number().int().min(0).max(86_400).optional(),
    additionalParams: keyValuePairs.optional(),
  })
  .strict()
  .refine((r) => r.terminationType === 'GRACEFUL' || r.gracefulTerminationTimeout === undefined, {
    message: 'gracefulTerminationTimeout applies only to GRACEFUL termination',
    path: ['gracefulTerminationTimeout'],
  });
export type TerminateVnfRequest = z.infer<typeof terminateVnfRequest>;

/** SOL003 5.5.2.5 ScaleVnfRequest */
export const scaleVnfRequest = z
  .object({
    type: z.enum(['SCALE_OUT', 'SCALE_IN']),
    aspectId: identifier,
    numberOfSteps: z.number().int().min(1).max(1000).default(1),
    additionalParams: keyValuePairs.optional(),
  })
  .strict();
export type ScaleVnfRequest = z.infer<typeof scaleVnfRequest>;

/**
 * SOL003 5.5.2.9 HealVnfRequest. `vnfcInstanceId` names vnfcInfo ids (v2) or vnfcResourceInfo ids
 * (v1, as Tacker's v1 API uses them); `healScript` is the V2.6.1 attribute v1 clients may send.
 */
export const healVnfRequest = z
  .object({
    vnfcInstanceId: z.array(identifier).max(1000).optional(),
    cause: z.string().max(1024).optional(),
    additionalParams: keyValuePairs.optional(),
    healScript: z.string().max(1024).optional(),
  })
  .strict();
export type HealVnfRequest = z.infer<typeof healVnfRequest>;

/** SOL003 5.5.2.11a ChangeCurrentVnfPkgRequest (additionalParams as seed 004 writes them are checked by the LCM engine). */
export const changeCurrentVnfPkgRequest = z
  .object({
    vnfdId: identifier,
    extVirtualLinks: z.array(extVirtualLink).optional(),
    extManagedVirtualLinks: z.array(z.record(z.string(), z.unknown())).optional(),
    vimConnectionInfo: z.record(identifier, vimConnectionInfo).optional(),
    additionalParams: keyValuePairs.optional(),
    extensions: keyValuePairs.optional(),
    vnfConfigurableProperties: keyValuePairs.optional(),
  })
  .strict();
export type ChangeCurrentVnfPkgRequest = z.infer<typeof changeCurrentVnfPkgRequest>;

/**
 * v1 (SOL003 V2.6.1, Tacker's default) InstantiateVnfRequest: vimConnectionInfo and each extCp's
 * cpConfig are arrays; they become the V3 maps (cpConfig keyed by cpInstanceId, else by position).
 */
export function normaliseV1Instantiate(body: unknown): unknown {
  const normalised = normaliseV1Modification(body);
  if (!normalised || typeof normalised !== 'object') return normalised;
  const request = normalised as { extVirtualLinks?: unknown };
  if (!Array.isArray(request.extVirtualLinks)) return normalised;
  return {
    ...request,
    extVirtualLinks: request.extVirtualLinks.map((link: unknown) => {
      if (!link || typeof link !== 'object' || !Array.isArray((link as { extCps?: unknown }).extCps)) return link;
      return {
        ...link,
        extCps: (link as { extCps: unknown[] }).extCps.map((cp) => {
          const config = (cp as { cpConfig?: unknown } | null)?.cpConfig;
          if (!Array.isArray(config)) return cp;
          const map = Object.fromEntries(
            config.map((entry, i) => [
              String((entry as { cpInstanceId?: unknown } | null)?.cpInstanceId ?? `${(cp as { cpdId?: string }).cpdId ?? 'cp'}-${i}`),
              entry,
            ]),
          );
          return { ...(cp as object), cpConfig: map };
        }),
      };
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// SCALE_TO_LEVEL (SOL003 5.4.6)

/** SOL003 ScaleInfo as a ScaleVnfToLevelRequest gives it: an aspect and the scale level it is to have. */
const targetScaleInfo = z
  .object({
    aspectId: identifier,
    /** Present only when it differs from the instance's vnfdId, which it cannot while the instance is idle. */
    vnfdId: identifier.optional(),
    scaleLevel: z.number().int().min(0, 'a scale level is 0 or more').max(1000),
  })
  .strict();

/**
 * SOL003 5.5.2.6 ScaleVnfToLevelRequest: the target either as an instantiation level of the
 * instance's deployment flavour or as scale levels of some of its aspects (the others keep theirs),
 * exactly one of the two.
 */
export const scaleVnfToLevelRequest = z
  .object({
    instantiationLevelId: identifier.optional(),
    scaleInfo: z.array(targetScaleInfo).min(1, 'scaleInfo names at least one scaling aspect').max(1000).optional(),
    additionalParams: keyValuePairs.optional(),
  })
  .strict()
  .superRefine((request, ctx) => {
    if ((request.instantiationLevelId === undefined) === (request.scaleInfo === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `give either instantiationLevelId or scaleInfo (SOL003 5.5.2.6), ${request.instantiationLevelId === undefined ? 'not neither' : 'not both'}`,
      });
    }
    const seen = new Set<string>();
    for (const [index, entry] of (request.scaleInfo ?? []).entries()) {
      if (seen.has(entry.aspectId)) ctx.addIssue({ code: 'custom', path: ['scaleInfo', index, 'aspectId'], message: `names aspect ${entry.aspectId} again` });
      seen.add(entry.aspectId);
    }
  });
export type ScaleVnfToLevelRequest = z.infer<typeof scaleVnfToLevelRequest>;

// ---------------------------------------------------------------------------------------------
// CHANGE_EXT_CONN

/** SOL003 IpOverEthernetAddressData.ipAddresses: exactly one of fixed addresses, a number of dynamic ones or a range. */
const ipAddressData = z
  .object({
    type: z.enum(['IPV4', 'IPV6']),
    fixedAddresses: z.array(z.string().min(1).max(64)).min(1).optional(),
    numDynamicAddresses: z.number().int().min(1).optional(),
    addressRange: z
      .object({ minAddress: z.string().min(1), maxAddress: z.string().min(1) })
      .strict()
      .optional(),
    subnetId: identifier.optional(),
  })
  .passthrough()
  .refine((ip) => [ip.fixedAddresses, ip.numDynamicAddresses, ip.addressRange].filter((given) => given !== undefined).length === 1, {
    message: 'give exactly one of fixedAddresses, numDynamicAddresses and addressRange',
  });

/** SOL003 CpProtocolData: IP over Ethernet (the one layer protocol an external CP's port is configured with). */
const cpProtocolData = z
  .object({
    layerProtocol: z.enum(['IP_OVER_ETHERNET', 'IP_FOR_VIRTUAL_CP']),
    ipOverEthernet: z
      .object({
        macAddress: z.string().min(1).optional(),
        segmentationType: z.string().min(1).optional(),
        segmentationId: z.string().min(1).optional(),
        ipAddresses: z.array(ipAddressData).optional(),
      })
      .passthrough()
      .optional(),
  })
  .passthrough();

/** SOL003 VnfExtCpConfig: a link port to use, or how to configure the one the VNFM creates. */
const vnfExtCpConfig = z
  .object({
    parentCpConfigId: identifier.optional(),
    linkPortId: identifier.optional(),
    createExtLinkPort: z.boolean().optional(),
    cpProtocolData: z.array(cpProtocolData).optional(),
    netAttDefResourceId: z.array(identifier).optional(),
  })
  .passthrough()
  .refine((config) => config.linkPortId !== undefined || config.cpProtocolData !== undefined || config.netAttDefResourceId !== undefined, {
    message: 'give linkPortId or cpProtocolData',
  });

/** SOL003 VnfExtCpData, its cpConfig checked as a change of connectivity uses it. */
const vnfExtCpData = z.object({ cpdId: identifier, cpConfig: z.record(identifier, vnfExtCpConfig).optional() }).passthrough();

/**
 * SOL003 5.5.2.11 ChangeExtVnfConnectivityRequest: at least one external VL, each naming the CPs
 * it connects. v1 (SOL003 V2.6.1) bodies carry vimConnectionInfo and cpConfig as arrays: read them
 * with normaliseV1Instantiate first.
 */
export const changeExtVnfConnectivityRequest = z
  .object({
    extVirtualLinks: z.array(extVirtualLink.extend({ extCps: z.array(vnfExtCpData) })).min(1, 'at least one external virtual link is required'),
    vimConnectionInfo: z.record(identifier, vimConnectionInfo).optional(),
    additionalParams: keyValuePairs.optional(),
  })
  .strict();
export type ChangeExtVnfConnectivityRequest = z.infer<typeof changeExtVnfConnectivityRequest>;

// ---------------------------------------------------------------------------------------------
// The cancel task of an op occ (SOL003 5.4.17).

/** SOL003 CancelMode: the same in V2.6.1 (/vnflcm/v1, as Tacker's v1 takes it) and V3.7.1, cancelMode required. */
export const cancelModeRequest = z
  .object({
    cancelMode: z.enum(['GRACEFUL', 'FORCEFUL']),
  })
  .strict();
export type CancelModeRequest = z.infer<typeof cancelModeRequest>;

// ---------------------------------------------------------------------------------------------
// OPERATE (SOL003 5.4.10)

/**
 * SOL003 5.5.2.10 OperateVnfRequest, with SOL002's optional `vnfcInstanceId` (the VNFCs to start or
 * stop, by vnfcInfo or vnfcResourceInfo id; every VNFC when absent). The note of 5.5.2.10: stopType
 * and gracefulStopTimeout only with STOPPED; gracefulStopTimeout present exactly when stopType is
 * GRACEFUL; a STOPPED request without stopType is FORCEFUL.
 */
export const operateVnfRequest = z
  .object({
    vnfcInstanceId: z.array(identifier).min(1).max(1000).optional(),
    changeStateTo: z.enum(['STARTED', 'STOPPED']),
    stopType: z.enum(['FORCEFUL', 'GRACEFUL']).optional(),
    gracefulStopTimeout: z.number().int().min(0).max(86_400).optional(),
    additionalParams: keyValuePairs.optional(),
  })
  .strict()
  .superRefine((request, ctx) => {
    if (request.changeStateTo === 'STARTED') {
      for (const key of ['stopType', 'gracefulStopTimeout'] as const) {
        if (request[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'must be absent when changeStateTo is STARTED' });
      }
      return;
    }
    if (request.stopType === 'GRACEFUL' && request.gracefulStopTimeout === undefined) {
      ctx.addIssue({ code: 'custom', path: ['gracefulStopTimeout'], message: 'is required when stopType is GRACEFUL' });
    }
    if (request.stopType !== 'GRACEFUL' && request.gracefulStopTimeout !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['gracefulStopTimeout'],
        message: 'must be absent unless stopType is GRACEFUL (a stop without stopType is FORCEFUL)',
      });
    }
  });
export type OperateVnfRequest = z.infer<typeof operateVnfRequest>;

// ---------------------------------------------------------------------------------------------
// CHANGE_FLAVOUR

/** SOL003 5.5.2.7 ChangeVnfFlavourRequest (vimConnectionInfo as the v2 map; /vnflcm/v2 only). */
export const changeVnfFlavourRequest = z
  .object({
    newFlavourId: identifier,
    instantiationLevelId: identifier.optional(),
    extVirtualLinks: z.array(extVirtualLink).optional(),
    extManagedVirtualLinks: z.array(z.record(z.string(), z.unknown())).optional(),
    vimConnectionInfo: z.record(identifier, vimConnectionInfo).optional(),
    additionalParams: keyValuePairs.optional(),
    extensions: keyValuePairs.optional(),
    vnfConfigurableProperties: keyValuePairs.optional(),
  })
  .strict();
export type ChangeVnfFlavourRequest = z.infer<typeof changeVnfFlavourRequest>;

// ---------------------------------------------------------------------------------------------
// VNF snapshots (SOL003 V3.7.1 5.5.2.20, 5.5.2.21 and 5.5.2.25)

/**
 * SOL003 5.5.2.20 CreateVnfSnapshotInfoRequest: empty for a resource that CREATE_SNAPSHOT fills;
 * vnfSnapshotPkgId and vnfSnapshot go together, for a resource extracted from a VNF snapshot package.
 */
export const createVnfSnapshotInfoRequest = z
  .object({
    vnfSnapshotPkgId: identifier.optional(),
    vnfSnapshot: keyValuePairs.optional(),
  })
  .strict()
  .refine((r) => (r.vnfSnapshotPkgId === undefined) === (r.vnfSnapshot === undefined), {
    message: 'vnfSnapshotPkgId and vnfSnapshot go together (a VNF snapshot package extraction); send neither for a resource CREATE_SNAPSHOT fills',
    path: ['vnfSnapshotPkgId'],
  });
export type CreateVnfSnapshotInfoRequest = z.infer<typeof createVnfSnapshotInfoRequest>;

/** SOL003 5.5.2.21 CreateVnfSnapshotRequest: the resource to fill; one VNFC only when vnfcInstanceId names it. */
export const createVnfSnapshotRequest = z
  .object({
    vnfSnapshotInfoId: identifier,
    vnfcInstanceId: identifier.optional(),
    additionalParams: keyValuePairs.optional(),
    userDefinedData: keyValuePairs.optional(),
  })
  .strict();
export type CreateVnfSnapshotRequest = z.infer<typeof createVnfSnapshotRequest>;

/** SOL003 5.5.2.25 RevertToVnfSnapshotRequest: the whole VNF snapshot, or one VNFC to one of its VNFC snapshots. */
export const revertToVnfSnapshotRequest = z
  .object({
    vnfSnapshotInfoId: identifier,
    vnfcInstanceId: identifier.optional(),
    vnfcSnapshotInfoId: identifier.optional(),
    additionalParams: keyValuePairs.optional(),
  })
  .strict()
  .refine((r) => (r.vnfcInstanceId === undefined) === (r.vnfcSnapshotInfoId === undefined), {
    message: 'vnfcInstanceId and vnfcSnapshotInfoId go together: the VNFC to revert and the VNFC snapshot to revert it to',
    path: ['vnfcSnapshotInfoId'],
  });
export type RevertToVnfSnapshotRequest = z.infer<typeof revertToVnfSnapshotRequest>;
