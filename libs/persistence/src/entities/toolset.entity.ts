import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Contract } from '@app/common';

/** One catalog row per configured toolset, published by pollers after each connect. */
@Entity({ name: 'toolsets' })
export class ToolsetEntity {
  @PrimaryColumn('text') name!: string;
  @Column('text') server!: string;
  @Column('text') contract!: Contract;
  @Column('text') description!: string;
  @Column('jsonb', { name: 'input_schema' }) inputSchema!: Record<string, unknown>;
  @Column('boolean') available!: boolean;
  @Column('text', { name: 'unavailable_reason', nullable: true }) unavailableReason!: string | null;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt!: Date;
  /** The toolset's task deadline in seconds from submit; null = none. */
  @Column('int', { name: 'deadline_seconds', nullable: true }) deadlineSeconds!: number | null;
  /** Set while no live worker has this toolset configured (the catalog sweep). */
  @Column('timestamptz', { name: 'removed_at', nullable: true }) removedAt!: Date | null;
}
