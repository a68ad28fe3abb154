export { newWebhookSecret, webhookHeaders } from './signing';
