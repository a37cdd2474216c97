// `vnfm login`: saves a profile (endpoint, client id and secret, token endpoint) after checking the
// credentials get a token, so later commands need only --profile or VNFM_PROFILE.
import type { Command } from 'commander';
import { CliError, VnfmClient } from '../client.ts';
import { DEFAULT_ENDPOINT, DEFAULT_PROFILE, saveProfile } from '../config.ts';
import { print } from '../context.ts';
import { promptSecret, readStdin } from '../input.ts';

export function loginCommand(program: Command): void {
  program
    .command('login')
    .description('save a profile: endpoint and client credentials (the secret is asked for without echo)')
    .requiredOption('--client-id <id>', 'OAuth 2.0 client id')
    .option('--client-secret-stdin', 'read the client secret from stdin')
    .option('--token-url <url>', 'token endpoint (default: <endpoint>/oauth2/token)')
    .action(async (options: { clientId: string; clientSecretStdin?: boolean; tokenUrl?: string }, command: Command) => {
      const globals = command.optsWithGlobals<{ endpoint?: string; profile?: string }>();
      const endpoint = (globals.endpoint || process.env.VNFM_ENDPOINT || DEFAULT_ENDPOINT).replace(/\/+$/, '');
      const name = globals.profile || process.env.VNFM_PROFILE || DEFAULT_PROFILE;
      const clientSecret = options.clientSecretStdin ? await readStdin() : await promptSecret(`Client secret for ${options.clientId}: `);
      if (!clientSecret) throw new CliError('The client secret is empty');
      const profile = { endpoint, clientId: options.clientId, clientSecret, tokenUrl: options.tokenUrl ?? `${endpoint}/oauth2/token` };
      // A profile that cannot get a token would only fail later, further from the mistake.
      await new VnfmClient({ endpoint, credentials: profile }).accessToken();
      const path = saveProfile(name, profile);
      print(`Logged in to ${endpoint} as ${options.clientId}; profile "${name}" saved in ${path}`);
    });
}
