// Tenancy: a caller sees its own tenant's records, an admin every tenant's, and what a caller may
// not see must look absent (404), never forbidden.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canSee, listScope } from '#lib/auth/tenancy.ts';
import { ALL_TENANTS } from '#lib/store/dynamo.ts';

describe('tenancy', () => {
  it('a caller sees its own tenant only', () => {
    assert.equal(canSee({ tenantId: 'a' }, 'a'), true);
    assert.equal(canSee({ tenantId: 'a' }, 'b'), false);
    assert.equal(canSee({ tenantId: 'a', admin: false }, 'b'), false);
  });

  it('an admin sees every tenant', () => {
    assert.equal(canSee({ tenantId: 'a', admin: true }, 'b'), true);
  });

  it("lists are scoped to the caller's tenant, or to all tenants for an admin", () => {
    assert.equal(listScope({ tenantId: 'a' }), 'a');
    assert.equal(listScope({ tenantId: 'a', admin: true }), ALL_TENANTS);
  });
});
