import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An API key; only the SHA-256 of the key is stored. */
@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'user_id' }) userId!: string;
  @Column('text') name!: string;
  @Column('text', { name: 'key_hash' }) keyHash!: string;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
  @Column('timestamptz', { name: 'last_used_at', nullable: true }) lastUsedAt!: Date | null;
  @Column('timestamptz', { name: 'revoked_at', nullable: true }) revokedAt!: Date | null;
}
